// Tests of what only PostgresStore has: its schema table and migrations, its connections (refused,
// dropped by the server), NOTIFY across nodes, and URLs whose passwords stay out of logs.
#include "serve/postgres_store.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

TEST_F(PostgresStoreTest, TheSchemaIsVersionedAndANewerOneIsRefused) {
  reopen();
  EXPECT_EQ(testing::sql_value(location_, "SELECT version FROM cudojo_schema"), "8");
  reopen();  // opening again migrates nothing
  EXPECT_EQ(testing::sql_value(location_, "SELECT COUNT(*) FROM cudojo_schema"), "1");
  store_.reset();
  testing::sql_value(location_, "UPDATE cudojo_schema SET version = 99");
  try {
    reopen();
    ADD_FAILURE() << "a schema newer than this build's was used";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.code(), StoreErrorCode::kInternal);
    EXPECT_NE(std::string(error.what()).find("version 99"), std::string::npos) << error.what();
  }
}

TEST_F(PostgresStoreTest, AnUnreachableDatabaseIsUnavailableNotInternal) {
  // Port 1 on loopback: nothing listens, so the connection is refused at once.
  EXPECT_EQ(error_code([] { PostgresStore store("postgresql://cudojo@127.0.0.1:1/cudojo"); }),
            StoreErrorCode::kUnavailable);
}

// Makes the test's database as a release at schema `version` left it: its migration steps, run as
// that release ran them, then `rows` in that schema.
void make_old_database(const std::string& location, int version, const std::string& rows) {
  for (int step = 0; step < version; ++step)
    ASSERT_EQ(testing::sql_value(location, postgres_migrations().at(step)), "") << "step " << step + 1;
  ASSERT_EQ(testing::sql_value(location,
                               "CREATE TABLE cudojo_schema (version INTEGER NOT NULL);"
                               "INSERT INTO cudojo_schema VALUES (" +
                                   std::to_string(version) + ");" + rows),
            "");
  // The rows name their ids, as an older release's would have been given: the sequences move past them.
  EXPECT_FALSE(testing::sql_value(location,
                                  "SELECT setval('learners_id_seq', (SELECT MAX(id) FROM learners)),"
                                  " setval('jobs_id_seq', (SELECT MAX(id) FROM jobs))")
                   .starts_with("error"));
}

// A database of schema version 1 (before submission keys) gains the column at open, its jobs kept.
TEST_F(PostgresStoreTest, AVersionOneDatabaseIsMigrated) {
  make_old_database(location_, 1,
                    "INSERT INTO learners (id, name, token_sha256, created_at) VALUES (1, 'ada', 'd', 0);"
                    "INSERT INTO jobs (id, learner_id, stage, source, state, created_at)"
                    " VALUES (1, 1, 'reduction/3', 'kept', 'queued', 0);");
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "SELECT version FROM cudojo_schema"), "8");
  EXPECT_EQ(migrated.job(1)->source, "kept");
  EXPECT_FALSE(migrated.submit({1, "reduction/3", "new", "cuda", "key-1"}).replayed);
  EXPECT_TRUE(migrated.submit({1, "reduction/3", "new", "cuda", "key-1"}).replayed);
}

// A database of schema version 2 (before client addresses) gains jobs.client_address at open; its
// older jobs hold no address's share.
TEST_F(PostgresStoreTest, AVersionTwoDatabaseGainsTheClientAddress) {
  make_old_database(location_, 2,
                    "INSERT INTO learners (id, name, token_sha256, created_at) VALUES (1, 'ada', 'd', 0);"
                    "INSERT INTO jobs (id, learner_id, stage, source, state, created_at)"
                    " VALUES (1, 1, 'reduction/3', 'kept', 'queued', 0);");
  const std::string has_column =
      "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'jobs'"
      " AND column_name = 'client_address'";
  ASSERT_EQ(testing::sql_value(location_, has_column), "0");
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "SELECT version FROM cudojo_schema"), "8");
  EXPECT_EQ(testing::sql_value(location_, has_column), "1");
  expect_address_cap_after_migration(migrated, 1, 1);
}

// A database of schema version 3 (before classes): its learners land in the default class with their
// tokens and history, and finished jobs' gate figures are read out of their reports.
TEST_F(PostgresStoreTest, AVersionThreeDatabaseKeepsItsLearnersInTheDefaultClass) {
  const std::string token = "a-token-issued-before-classes";
  make_old_database(location_, 3,
                    "INSERT INTO learners (id, name, token_sha256, created_at) VALUES (7, 'Ada L', '" +
                        token_digest(token) +
                        "', 0);"
                        "INSERT INTO jobs (id, learner_id, stage, source, state, created_at, finished_at,"
                        " verdict, report) VALUES (3, 7, 'reduction/3', 'x', 'done', 0, 1, 'accepted',"
                        " '{\"verdict\": \"accepted\", \"metrics\": {\"time_ratio\": 0.75}}');");
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "SELECT version FROM cudojo_schema"), "8");
  expect_classes_after_migration(migrated, token, 7, 3);
}

// After the server drops every connection (a restart does), the pooled connections look alive
// until used; the next call must still succeed, on a fresh connection, not fail once per dead one.
TEST_F(PostgresStoreTest, CallsSucceedAfterTheServerDroppedEveryConnection) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  // Fill the pool: several calls at once, so several connections are made and kept.
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) callers.emplace_back([&] { store.pending_count(); });
  for (auto& caller : callers) caller.join();
  const std::string name = location_.substr(location_.rfind('/') + 1);
  ASSERT_FALSE(testing::sql_value(location_,
                                  "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                  " WHERE datname = '" +
                                      name + "' AND pid <> pg_backend_pid()")
                   .starts_with("error"));
  for (int call = 0; call < 8; ++call) {
    EXPECT_EQ(error_code([&] { store.enqueue(ada.id, "reduction/2", "x"); }), std::nullopt)
        << "call " << call;
  }
  EXPECT_EQ(store.pending_count(), 8);
}

// A job queued through one node wakes a watcher on another at once (NOTIFY), not at its next poll.
TEST_F(PostgresStoreTest, AJobQueuedOnOneNodeWakesTheWatchersOfAnother) {
  Store& judge = reopen();
  Store& web = another();
  const auto ada = web.create_learner("ada").learner;
  std::mutex mutex;
  std::condition_variable heard;
  int calls = 0;
  judge.watch_new_jobs([&] {
    std::lock_guard lock(mutex);
    ++calls;
    heard.notify_all();
  });
  {
    // The watcher calls once as it starts listening (jobs may have come meanwhile).
    std::unique_lock lock(mutex);
    ASSERT_TRUE(heard.wait_for(lock, std::chrono::seconds(5), [&] { return calls >= 1; }));
  }
  const int before = calls;
  web.enqueue(ada.id, "reduction/2", "x");
  std::unique_lock lock(mutex);
  EXPECT_TRUE(heard.wait_for(lock, std::chrono::seconds(2), [&] { return calls > before; }));
  lock.unlock();
  judge.stop_watching();
}

TEST(PostgresUrl, PasswordsNeverReachLogs) {
  EXPECT_EQ(redact_postgres_url("postgresql://ada:s3cret@db:5432/cudojo"),
            "postgresql://ada:***@db:5432/cudojo");
  EXPECT_EQ(redact_postgres_url("postgres://db/cudojo?password=s3cret&sslmode=require"),
            "postgres://db/cudojo?password=***&sslmode=require");
  EXPECT_EQ(redact_postgres_url("postgresql://cudojo@127.0.0.1:5433/cudojo"),
            "postgresql://cudojo@127.0.0.1:5433/cudojo");
  EXPECT_TRUE(is_postgres_location("postgresql://db/x"));
  EXPECT_FALSE(is_postgres_location("/srv/cudojo/cudojo.sqlite3"));
  EXPECT_THROW(open_store("mysql://db/cudojo"), StoreError);
}

}  // namespace cudojo::store_test

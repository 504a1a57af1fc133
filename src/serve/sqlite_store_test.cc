// Tests of what only SqliteStore has: its file (not a database, locked by another connection) and
// its migrations from older releases' files.
#include "serve/sqlite_store.h"

#include <sqlite3.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "serve/store_shares.h"
#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

// The schema as an older release left it: version 1 (jobs.language), 4 (leases, nodes and
// submission keys, before client addresses) or 5 (client addresses, before classes).
std::string old_schema(int version) {
  std::string sql =
      "CREATE TABLE learners (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
      " token_sha256 TEXT NOT NULL UNIQUE, created_at REAL NOT NULL);"
      "CREATE TABLE jobs (id INTEGER PRIMARY KEY, learner_id INTEGER NOT NULL REFERENCES"
      " learners(id), stage TEXT NOT NULL, source TEXT NOT NULL, state TEXT NOT NULL CHECK"
      " (state IN ('queued', 'running', 'done')), phase TEXT NOT NULL DEFAULT 'queued',"
      " attempts INTEGER NOT NULL DEFAULT 0, verdict TEXT, report TEXT, created_at REAL"
      " NOT NULL, started_at REAL, finished_at REAL, language TEXT NOT NULL DEFAULT 'cuda');";
  if (version >= 4) {
    sql +=
        "ALTER TABLE learners ADD COLUMN leaderboard INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE learners ADD COLUMN last_served_at REAL;"
        "ALTER TABLE jobs ADD COLUMN holder TEXT; ALTER TABLE jobs ADD COLUMN lease_until REAL;"
        "ALTER TABLE jobs ADD COLUMN client_key TEXT;"
        "CREATE UNIQUE INDEX jobs_by_client_key ON jobs(learner_id, client_key) WHERE client_key IS NOT NULL;"
        "CREATE TABLE nodes (name TEXT PRIMARY KEY, host TEXT NOT NULL, gpu TEXT NOT NULL,"
        " workers INTEGER NOT NULL, http INTEGER NOT NULL, started_at REAL NOT NULL, last_seen REAL NOT "
        "NULL);";
  }
  if (version >= 5) sql += "ALTER TABLE jobs ADD COLUMN client_address TEXT;";
  return sql + "PRAGMA user_version = " + std::to_string(version) + ";";
}

void write_old_database(const fs::path& file, const std::string& sql) {
  fs::create_directories(file.parent_path());
  sqlite3* old = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &old), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(old, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(old);
}

// A database from before the leaderboard flag (schema version 1) gains it, every learner opted out,
// and its jobs are kept.
TEST_F(SqliteStoreTest, AVersionOneDatabaseIsMigrated) {
  write_old_database(file(), old_schema(1) +
                                 "INSERT INTO learners VALUES (1, 'ada', 'digest', 0);"
                                 "INSERT INTO jobs (learner_id, stage, source, state, created_at, language)"
                                 " VALUES (1, 'reduction/3', 'x', 'queued', 0, 'python');");
  Store& store = reopen();
  auto ada = store.set_leaderboard(1, false);
  ASSERT_TRUE(ada.has_value());
  EXPECT_EQ(ada->name, "ada");
  EXPECT_EQ(store.job(1)->language, "python");
  EXPECT_TRUE(store.set_leaderboard(1, true)->leaderboard);
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "10");
  EXPECT_EQ(ada->class_id, store.classes().default_class().id);
  EXPECT_FALSE(store.submit({1, "reduction/3", "y", "cuda", "key-1"}).replayed);
  EXPECT_TRUE(store.submit({1, "reduction/3", "y", "cuda", "key-1"}).replayed);
}

// A database of schema version 5 (before classes): its learners land in the default class with their
// tokens and history, and finished jobs' gate figures are read out of their reports.
TEST_F(SqliteStoreTest, AVersionFiveDatabaseKeepsItsLearnersInTheDefaultClass) {
  const std::string token = "a-token-issued-before-classes";
  write_old_database(
      file(), old_schema(5) +
                  "INSERT INTO learners (id, name, token_sha256, created_at) VALUES (7, 'Ada L', '" +
                  token_digest(token) +
                  "', 0);"
                  "INSERT INTO jobs (id, learner_id, stage, source, state, created_at, finished_at, verdict,"
                  " report) VALUES (3, 7, 'reduction/3', 'x', 'done', 0, 1, 'accepted',"
                  " '{\"verdict\": \"accepted\", \"metrics\": {\"time_ratio\": 0.75}}');");
  Store& store = reopen();
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "10");
  expect_classes_after_migration(store, token, 7, 3);
  // The rebuild switched foreign keys off for its length only: a draft of no learner is refused.
  EXPECT_EQ(error_code([&] {
              store.classes().save_draft(999, {"reduction/3", "cuda", "x", 0});
            }),
            StoreErrorCode::kInternal);
}

TEST_F(SqliteStoreTest, AFileThatIsNotADatabaseIsAnInternalError) {
  fs::create_directories(path_);
  std::ofstream(file(), std::ios::binary) << std::string(4096, 'x');
  EXPECT_EQ(error_code([&] { SqliteStore store(file()); }), StoreErrorCode::kInternal);
}

TEST_F(SqliteStoreTest, AWriteLockHeldElsewhereFailsAfterTheBusyTimeout) {
  constexpr int kBusyTimeoutMs = 200;
  SqliteStore store(file(), kBusyTimeoutMs);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(file().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kInternal);
  const auto waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  // It waited for the lock, and gave up after this Store's timeout, not the default's 5 s.
  EXPECT_GE(waited_ms, kBusyTimeoutMs * 0.9);
  EXPECT_LT(waited_ms, ServeLimits{}.database_busy_timeout_ms * 0.5);
  store.create_learner("ada");  // the lock is gone
}

// A database of schema version 4 (before client addresses) gains jobs.client_address at open; its
// older jobs hold no address's share.
TEST_F(SqliteStoreTest, AVersionFourDatabaseGainsTheClientAddress) {
  write_old_database(
      file(), old_schema(4) +
                  "INSERT INTO learners (id, name, token_sha256, created_at) VALUES (1, 'ada', 'd', 0);"
                  "INSERT INTO jobs (id, learner_id, stage, source, state, created_at)"
                  " VALUES (1, 1, 'reduction/3', 'kept', 'queued', 0);");
  const std::string has_column =
      "SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = 'client_address'";
  ASSERT_EQ(testing::sql_value(location_, has_column), "0");
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "10");
  EXPECT_EQ(testing::sql_value(location_, has_column), "1");
  expect_address_cap_after_migration(migrated, 1, 1);
}

// A database of schema version 8 (before profiles) gains jobs.profile and the reports' table at
// open: its jobs were not profiled, and a profiled job keeps its report.
TEST_F(SqliteStoreTest, AVersionEightDatabaseGainsProfiledJobsAndTheirReports) {
  std::int64_t learner = 0, old_job = 0;
  {
    Store& made = reopen();
    learner = made.create_learner("ada").learner.id;
    old_job = made.enqueue(learner, "reduction/3", "kept");
  }
  store_.reset();
  for (const char* sql :
       {"DROP TABLE ncu_reports", "ALTER TABLE jobs DROP COLUMN profile", "PRAGMA user_version = 8"})
    ASSERT_EQ(testing::sql_value(location_, sql), "") << sql;
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "10");
  EXPECT_FALSE(migrated.job(old_job)->profile);
  Submission profiled{learner, "reduction/3", "new", "cuda", "", ""};
  profiled.profile = true;
  const auto id = migrated.submit(profiled).id;
  migrated.claim_next(kNode, kLease);  // the old job, first in the queue
  const auto claimed = migrated.claim_next(kNode, kLease);
  ASSERT_TRUE(claimed && claimed->id == id && claimed->profile);
  EXPECT_TRUE(migrated.keep_ncu_report(claimed->claim(), "NVIDIA Nsight Compute report"));
  EXPECT_EQ(migrated.ncu_report(id), std::optional<std::string>("NVIDIA Nsight Compute report"));
}

// A database of schema version 9 (before the class's switch for links) gains it, on for every class,
// and who stopped a link, nobody of the staff for the links stopped before: they stay stopped.
TEST_F(SqliteStoreTest, AVersionNineDatabaseKeepsItsLinksAndHasLinksOnInEveryClass) {
  std::int64_t live_job = 0, stopped_job = 0;
  std::string live_link;
  {
    Store& made = reopen();
    const auto ada = made.create_learner("ada").learner;
    live_job = finished_job(made, ada.id, "reduction/3", "accepted", 1.1);
    stopped_job = finished_job(made, ada.id, "reduction/4", "accepted", 1.1);
    live_link = made.shares().create_share(live_job, ada.id, 50)->token;
    made.shares().create_share(stopped_job, ada.id, 50);
    made.shares().revoke_share(stopped_job, ada.id);
  }
  store_.reset();
  for (const char* sql : {"ALTER TABLE classes DROP COLUMN sharing_open",
                          "ALTER TABLE job_shares DROP COLUMN stopped_by", "PRAGMA user_version = 9"})
    ASSERT_EQ(testing::sql_value(location_, sql), "") << sql;
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "10");
  EXPECT_TRUE(migrated.classes().default_class().sharing_open);
  EXPECT_TRUE(migrated.shares().shared_job(live_link).has_value());
  const auto stopped = migrated.shares().job_share(stopped_job, migrated.job(stopped_job)->learner_id);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_TRUE(stopped->revoked_at.has_value());
  EXPECT_EQ(stopped->stopped_by, std::nullopt);
}

// A database newer than this build's is refused, never written to.
TEST_F(SqliteStoreTest, ANewerSchemaIsRefused) {
  write_old_database(file(), "CREATE TABLE learners (id INTEGER PRIMARY KEY); PRAGMA user_version = 99;");
  try {
    reopen();
    ADD_FAILURE() << "a schema newer than this build's was used";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.code(), StoreErrorCode::kInternal);
    EXPECT_NE(std::string(error.what()).find("version 99"), std::string::npos) << error.what();
  }
}

// The store's file on a filesystem of 256 KiB (a tmpfs mounted over the test's folder), so a test can
// fill the disk for real. Mounting needs root; the tests are skipped without it.
class SqliteStoreOnATinyDisk : public SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "filling a disk mounts a tmpfs of 256 KiB, which needs root";
    fs::create_directories(path_);
    if (mount("tmpfs", path_.c_str(), "tmpfs", 0, "size=256k") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs on " << path_ << ": " << std::strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    store_.reset();  // the file closes before its filesystem goes
    if (mounted_ && umount(path_.c_str()) != 0) umount2(path_.c_str(), MNT_DETACH);
    SqliteStoreTest::TearDown();
  }
  bool mounted_ = false;
};

// SQLite rolls a transaction back itself when the disk is full, so a ROLLBACK after it fails ("cannot
// rollback - no transaction is active"); the error the caller gets must still be the full disk.
TEST_F(SqliteStoreOnATinyDisk, AFullDiskIsTheErrorToldNotTheRollbackAfterIt) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const std::string source(16 * 1024, 'x');
  std::optional<std::string> failure;
  int queued = 0;
  for (int i = 0; i < 200 && !failure; ++i) {
    try {
      store.enqueue(ada.id, "reduction/2", source);
      ++queued;
    } catch (const StoreError& error) {
      failure = error.what();
      EXPECT_EQ(error.code(), StoreErrorCode::kInternal);
    }
  }
  ASSERT_TRUE(failure.has_value()) << "256 KiB held " << queued << " jobs of 16 KiB";
  EXPECT_NE(failure->find("database or disk is full"), std::string::npos) << *failure;
  EXPECT_EQ(failure->find("cannot rollback"), std::string::npos) << *failure;
  // Every job acknowledged before is there, and the store still answers.
  EXPECT_EQ(store.pending_count(), queued);
}

}  // namespace cudojo::store_test

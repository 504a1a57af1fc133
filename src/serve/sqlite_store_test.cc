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

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

// A database from before the leaderboard flag (schema version 1) gains it, every learner opted out,
// and its jobs are kept.
TEST_F(SqliteStoreTest, AVersionOneDatabaseIsMigrated) {
  fs::create_directories(path_);
  sqlite3* old = nullptr;
  ASSERT_EQ(sqlite3_open(file().c_str(), &old), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(old,
                   "CREATE TABLE learners (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
                   " token_sha256 TEXT NOT NULL UNIQUE, created_at REAL NOT NULL);"
                   "CREATE TABLE jobs (id INTEGER PRIMARY KEY, learner_id INTEGER NOT NULL REFERENCES"
                   " learners(id), stage TEXT NOT NULL, source TEXT NOT NULL, state TEXT NOT NULL CHECK"
                   " (state IN ('queued', 'running', 'done')), phase TEXT NOT NULL DEFAULT 'queued',"
                   " attempts INTEGER NOT NULL DEFAULT 0, verdict TEXT, report TEXT, created_at REAL"
                   " NOT NULL, started_at REAL, finished_at REAL, language TEXT NOT NULL DEFAULT 'cuda');"
                   "INSERT INTO learners VALUES (1, 'ada', 'digest', 0);"
                   "INSERT INTO jobs (learner_id, stage, source, state, created_at, language)"
                   " VALUES (1, 'reduction/3', 'x', 'queued', 0, 'python');"
                   "PRAGMA user_version = 1;",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(old);
  Store& store = reopen();
  auto ada = store.set_leaderboard(1, false);
  ASSERT_TRUE(ada.has_value());
  EXPECT_EQ(ada->name, "ada");
  EXPECT_EQ(store.job(1)->language, "python");
  EXPECT_TRUE(store.set_leaderboard(1, true)->leaderboard);
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "5");
  EXPECT_FALSE(store.submit({1, "reduction/3", "y", "cuda", "key-1"}).replayed);
  EXPECT_TRUE(store.submit({1, "reduction/3", "y", "cuda", "key-1"}).replayed);
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
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto old_job = store.enqueue(ada.id, "reduction/3", "kept");
  store_.reset();
  ASSERT_EQ(testing::sql_value(location_, "ALTER TABLE jobs DROP COLUMN client_address"), "");
  ASSERT_EQ(testing::sql_value(location_, "PRAGMA user_version = 4"), "");
  const std::string has_column =
      "SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = 'client_address'";
  ASSERT_EQ(testing::sql_value(location_, has_column), "0");
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "5");
  EXPECT_EQ(testing::sql_value(location_, has_column), "1");
  expect_address_cap_after_migration(migrated, ada.id, old_job);
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

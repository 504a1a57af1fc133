#include "serve/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "serve/postgres_store.h"
#include "serve/sqlite_store.h"
#include "serve/store_test_support.h"

namespace cudojo {

// Failure messages name the code rather than its bytes (found by ADL).
void PrintTo(StoreErrorCode code, std::ostream* out) {
  switch (code) {
    case StoreErrorCode::kInvalidName:
      *out << "kInvalidName";
      return;
    case StoreErrorCode::kNameTaken:
      *out << "kNameTaken";
      return;
    case StoreErrorCode::kInternal:
      *out << "kInternal";
      return;
    case StoreErrorCode::kUnavailable:
      *out << "kUnavailable";
      return;
    default:
      *out << static_cast<int>(code);
      return;
  }
}

namespace {

namespace fs = std::filesystem;

constexpr const char* kNode = "node-a#1";
constexpr double kLease = 30;
// A lease that has run out by the time anyone looks: the job it covers is back for the taking.
constexpr double kLapsedLease = 0;

// One store per test, on a database of its own: a SQLite file in a fresh folder, or a fresh
// PostgreSQL database on the test cluster (ctest starts one; tests/postgres/cluster.sh).
class StoreFixture : public ::testing::Test {
 protected:
  virtual std::string kind() const = 0;
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (kind() == "postgresql") {
      auto server = testing::postgres_test_server();
      if (!server) GTEST_SKIP() << testing::kNoPostgresReason;
      database_ = testing::create_postgres_database(*server);
      ASSERT_FALSE(database_.empty()) << "could not create a database on " << *server;
      location_ = database_;
      return;
    }
    std::string folder = "cudojo_store_test_" + std::to_string(getpid()) + "_" + test;
    std::replace(folder.begin(), folder.end(), '/', '_');
    path_ = fs::temp_directory_path() / folder;
    fs::remove_all(path_);
    location_ = file().string();
  }
  void TearDown() override {
    store_.reset();
    others_.clear();
    if (!database_.empty()) testing::drop_postgres_database(database_);
    if (!path_.empty()) fs::remove_all(path_);
  }
  fs::path file() const { return path_ / "cudojo.sqlite3"; }
  // The test's store, opened anew (closing the one before, as a server restart does).
  Store& reopen() {
    store_.reset();
    store_ = open_store(location_);
    return *store_;
  }
  // A second store on the same database, as another node has.
  Store& another() {
    others_.push_back(open_store(location_));
    return *others_.back();
  }
  // The code of the StoreError that `action` throws; nullopt when it throws none.
  template <typename Action>
  static std::optional<StoreErrorCode> error_code(Action action) {
    try {
      action();
    } catch (const StoreError& error) {
      return error.code();
    }
    return std::nullopt;
  }
  fs::path path_;
  std::string database_;
  std::string location_;
  std::unique_ptr<Store> store_;
  std::vector<std::unique_ptr<Store>> others_;
};

// Every behaviour both stores promise, run against each.
class StoreTest : public StoreFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string kind() const override { return GetParam(); }
};
INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

// What only a SQLite file has: the file, its lock, its migrations from older releases.
class SqliteStoreTest : public StoreFixture {
 protected:
  std::string kind() const override { return "sqlite"; }
};

// What only the shared database has: its schema table and its connections.
class PostgresStoreTest : public StoreFixture {
 protected:
  std::string kind() const override { return "postgresql"; }
};

TEST_P(StoreTest, TokensAuthenticateAndOnlyTheirDigestIsStored) {
  std::string token;
  {
    Store& store = reopen();
    IssuedLearner issued = store.create_learner("ada");
    token = issued.token;
    EXPECT_EQ(token.size(), 64u);
    auto found = store.find_learner_by_token(token);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->name, "ada");
    EXPECT_FALSE(store.find_learner_by_token(token + "x").has_value());
    EXPECT_FALSE(store.find_learner_by_token("").has_value());
  }
  // The database never holds the token itself, only its digest.
  EXPECT_EQ(
      testing::sql_value(location_, "SELECT COUNT(*) FROM learners WHERE token_sha256 = '" + token + "'"),
      "0");
  EXPECT_EQ(testing::sql_value(location_, "SELECT COUNT(*) FROM learners WHERE token_sha256 = '" +
                                              token_digest(token) + "'"),
            "1");
  if (kind() == "sqlite") {
    std::ifstream in(file(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(bytes.find(token), std::string::npos);
  }
}

TEST_P(StoreTest, NamesAreUniqueAndChecked) {
  Store& store = reopen();
  store.create_learner("ada");
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kNameTaken);
  EXPECT_EQ(error_code([&] { store.create_learner(""); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner(std::string(41, 'a')); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("robert'); DROP TABLE jobs;--"); }),
            StoreErrorCode::kInvalidName);
}

TEST_P(StoreTest, NamesMayHoldSingleSpacesAndAreTrimmed) {
  Store& store = reopen();
  EXPECT_EQ(store.create_learner("  Ada Lovelace ").learner.name, "Ada Lovelace");
  EXPECT_EQ(error_code([&] { store.create_learner("Ada Lovelace"); }), StoreErrorCode::kNameTaken);
  EXPECT_EQ(store.create_learner("a.b_c-d e").learner.name, "a.b_c-d e");
  EXPECT_EQ(error_code([&] { store.create_learner("two  spaces"); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("   "); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("tab\there"); }), StoreErrorCode::kInvalidName);
  // 40 characters after trimming are allowed; 41 are not.
  EXPECT_EQ(
      store.create_learner(" " + std::string(19, 'x') + " " + std::string(20, 'y') + " ").learner.name.size(),
      40u);
  EXPECT_EQ(error_code([&] { store.create_learner(std::string(20, 'x') + " " + std::string(20, 'y')); }),
            StoreErrorCode::kInvalidName);
}

TEST_P(StoreTest, TheLeaderboardFlagIsOffUntilSetAndSurvivesReopening) {
  std::string token;
  {
    Store& store = reopen();
    auto issued = store.create_learner("ada");
    token = issued.token;
    EXPECT_FALSE(store.find_learner_by_token(token)->leaderboard);
    auto updated = store.set_leaderboard(issued.learner.id, true);
    ASSERT_TRUE(updated.has_value());
    EXPECT_TRUE(updated->leaderboard);
    EXPECT_EQ(updated->name, "ada");
    EXPECT_FALSE(store.set_leaderboard(999, true).has_value());
  }
  Store& store = reopen();
  EXPECT_TRUE(store.find_learner_by_token(token)->leaderboard);
}

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
  EXPECT_EQ(testing::sql_value(location_, "PRAGMA user_version"), "4");
  EXPECT_FALSE(store.submit({1, "reduction/3", "y", "cuda", "key-1"}).replayed);
  EXPECT_TRUE(store.submit({1, "reduction/3", "y", "cuda", "key-1"}).replayed);
}

TEST_F(SqliteStoreTest, AFileThatIsNotADatabaseIsAnInternalError) {
  fs::create_directories(path_);
  std::ofstream(file(), std::ios::binary) << std::string(4096, 'x');
  EXPECT_EQ(error_code([&] { SqliteStore store(file()); }), StoreErrorCode::kInternal);
}

TEST_P(StoreTest, AFailingInsertIsAnInternalErrorNotTheCallersMistake) {
  Store& store = reopen();
  ASSERT_TRUE(testing::refuse_new_learners(location_));
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kInternal);
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

TEST_P(StoreTest, JobsRunInOrderAndFinishOnce) {
  Store& store = reopen();
  auto learner = store.create_learner("ada").learner;
  const auto first = store.enqueue(learner.id, "reduction/3", "a");
  const auto second = store.enqueue(learner.id, "reduction/3", "b");
  EXPECT_EQ(store.pending_count(), 2);
  EXPECT_EQ(store.queued_count(), 2);
  EXPECT_EQ(store.queue_position(second), 1);
  auto claimed = store.claim_next(kNode, kLease);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->id, first);
  EXPECT_EQ(claimed->state, JobState::kRunning);
  EXPECT_EQ(store.queue_position(second), 0);
  EXPECT_EQ(store.queued_count(), 1);  // the running job is pending but no longer queued
  EXPECT_EQ(claimed->holder, std::optional<std::string>(kNode));
  EXPECT_EQ(claimed->attempts, 1);
  EXPECT_TRUE(store.set_phase(claimed->claim(), "tests"));
  EXPECT_EQ(store.job(first)->phase, "tests");
  EXPECT_TRUE(store.finish(claimed->claim(), "accepted", "{}"));
  EXPECT_FALSE(store.finish(claimed->claim(), "wrong_answer", "{}"));  // never twice
  // The same result again (a reply lost with the connection) is answered as recorded.
  EXPECT_TRUE(store.finish(claimed->claim(), "accepted", "{}"));
  EXPECT_EQ(store.job(first)->verdict, std::optional<std::string>("accepted"));
  EXPECT_EQ(store.pending_count(), 1);
}

TEST_P(StoreTest, RestartRequeuesInterruptedJobsAndLosesNone) {
  std::int64_t running = 0, queued = 0;
  {
    Store& store = reopen();
    auto learner = store.create_learner("ada").learner;
    running = store.enqueue(learner.id, "reduction/2", "x");
    queued = store.enqueue(learner.id, "reduction/2", "y");
    ASSERT_EQ(store.claim_next(kNode, kLapsedLease)->id, running);
  }  // the server stops with one job running and one queued (and, shared, its lease runs out)
  Store& store = reopen();
  EXPECT_EQ(store.requeue_interrupted(), 1);
  EXPECT_EQ(store.job(running)->state, JobState::kQueued);
  EXPECT_EQ(store.claim_next(kNode, kLease)->id, running);
  EXPECT_EQ(store.claim_next(kNode, kLease)->id, queued);
  EXPECT_FALSE(store.claim_next(kNode, kLease).has_value());
}

TEST_P(StoreTest, AJobInterruptedTooOftenFailsInsteadOfLooping) {
  Store& store = reopen();
  auto learner = store.create_learner("ada").learner;
  const auto id = store.enqueue(learner.id, "reduction/2", "x");
  for (int attempt = 0; attempt < Store::kMaxAttempts; ++attempt) {
    ASSERT_TRUE(store.claim_next(kNode, kLapsedLease).has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(store.requeue_expired(), 1);
  }
  auto job = store.job(id);
  EXPECT_EQ(job->state, JobState::kDone);
  EXPECT_EQ(job->verdict, std::optional<std::string>("internal_error"));
  EXPECT_NE(job->report_json->find("started 3 times"), std::string::npos) << *job->report_json;
}

TEST_P(StoreTest, ConcurrentClaimsNeverShareAJob) {
  Store& store = reopen();
  auto learner = store.create_learner("ada").learner;
  for (int i = 0; i < 40; ++i) store.enqueue(learner.id, "reduction/2", "x");
  std::mutex mutex;
  std::vector<std::int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (auto job = store.claim_next(kNode, kLease)) {
        std::lock_guard lock(mutex);
        claimed.push_back(job->id);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(claimed.size(), 40u);
  EXPECT_EQ(std::set<std::int64_t>(claimed.begin(), claimed.end()).size(), 40u);
}

TEST_P(StoreTest, JobsAreTakenRoundRobinByLearner) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  auto cy = store.create_learner("cy").learner;
  const auto a1 = store.enqueue(ada.id, "reduction/2", "a1");
  const auto a2 = store.enqueue(ada.id, "reduction/2", "a2");
  const auto a3 = store.enqueue(ada.id, "reduction/2", "a3");
  const auto b1 = store.enqueue(bob.id, "reduction/2", "b1");
  const auto c1 = store.enqueue(cy.id, "reduction/2", "c1");
  std::vector<std::int64_t> order;
  while (auto job = store.claim_next(kNode, kLease)) {
    order.push_back(job->id);
    // Claims a moment apart, as jobs that each take time to judge.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(order, (std::vector<std::int64_t>{a1, b1, c1, a2, a3}));
}

TEST_P(StoreTest, QueueLimitsHoldUnderABurstOfSubmissions) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  const QueueLimits limits{6, 4};
  std::atomic<int> accepted{0}, learner_busy{0}, queue_full{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 40; ++t) {
    threads.emplace_back([&, t] {
      try {
        store.enqueue(t % 2 ? bob.id : ada.id, "reduction/2", "x", limits);
        ++accepted;
      } catch (const StoreError& error) {
        if (error.code() == StoreErrorCode::kLearnerBusy) ++learner_busy;
        if (error.code() == StoreErrorCode::kQueueFull) ++queue_full;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(accepted, 6);  // the queue's limit, never more
  EXPECT_EQ(accepted + learner_busy + queue_full, 40);
  EXPECT_LE(store.pending_count(ada.id), 4);
  EXPECT_LE(store.pending_count(bob.id), 4);
  EXPECT_EQ(store.pending_count(), 6);
}

TEST_P(StoreTest, HistoryIsPerLearnerNewestFirst) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  store.enqueue(ada.id, "reduction/2", "1");
  store.enqueue(bob.id, "reduction/2", "2");
  const auto last = store.enqueue(ada.id, "reduction/3", "3");
  auto history = store.history(ada.id, std::nullopt, 10);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].id, last);
  EXPECT_EQ(store.history(ada.id, std::string("reduction/2"), 10).size(), 1u);
  EXPECT_EQ(store.pending_count(bob.id), 1);
}

// Finishes a new job of `learner` with `verdict` and a report whose metrics hold the given ratios
// and median time (absent when negative); returns its id.
std::int64_t finished_job(Store& store, std::int64_t learner, const std::string& stage,
                          const std::string& verdict, double time_ratio, double baseline_ratio = -1,
                          double median_ms = -1, const std::string& language = "cuda") {
  const auto id = store.enqueue(learner, stage, "source", {}, language);
  auto claimed = store.claim_next(kNode, kLease);
  EXPECT_TRUE(claimed && claimed->id == id);
  nlohmann::json metrics = nlohmann::json::object();
  if (time_ratio >= 0) metrics["time_ratio"] = time_ratio;
  if (baseline_ratio >= 0) metrics["baseline_ratio"] = baseline_ratio;
  if (median_ms >= 0) metrics["time_ms"] = {{"median", median_ms}, {"min", median_ms}};
  EXPECT_TRUE(store.finish(claimed->claim(), verdict,
                           nlohmann::json{{"verdict", verdict}, {"metrics", metrics}}.dump()));
  return id;
}

TEST_P(StoreTest, HistoryPagesWithACursorAndReadsRatiosFromTheReport) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(finished_job(store, ada.id, "reduction/3", "accepted", 1.5, 0.9));
  auto page = store.history(ada.id, std::nullopt, 2);
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].id, ids[4]);
  EXPECT_EQ(page[1].id, ids[3]);
  EXPECT_EQ(page[0].time_ratio, 1.5);
  EXPECT_EQ(page[0].baseline_ratio, 0.9);
  EXPECT_EQ(page[0].state, JobState::kDone);
  auto next = store.history(ada.id, std::nullopt, 2, page[1].id);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].id, ids[2]);
  EXPECT_EQ(store.history(ada.id, std::string("reduction/3"), 10, ids[0]).size(), 0u);
  // A job still queued has no report, so no ratios.
  store.enqueue(ada.id, "reduction/2", "x");
  auto queued = store.history(ada.id, std::nullopt, 1);
  EXPECT_EQ(queued[0].state, JobState::kQueued);
  EXPECT_FALSE(queued[0].time_ratio.has_value());
  EXPECT_FALSE(queued[0].verdict.has_value());
}

TEST_P(StoreTest, ProgressCountsFinishedJobsAndKeepsTheBestAccepted) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  finished_job(store, ada.id, "reduction/3", "wrong_answer", -1);
  finished_job(store, ada.id, "reduction/3", "accepted", 1.8, -1, 0.5);
  finished_job(store, ada.id, "reduction/3", "accepted", 1.2, -1, 0.3);
  const auto last = finished_job(store, ada.id, "reduction/3", "too_slow", 3.0, -1, 0.9);
  const auto tried = finished_job(store, ada.id, "atomics/1", "compile_error", -1);
  finished_job(store, bob.id, "reduction/1", "accepted", 1.0);
  store.enqueue(ada.id, "reduction/2", "still queued");  // not finished: not progress
  auto stages = store.progress(ada.id);
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].stage, "atomics/1");
  EXPECT_FALSE(stages[0].accepted);
  EXPECT_EQ(stages[0].attempts, 1);
  EXPECT_FALSE(stages[0].best_time_ratio.has_value());
  EXPECT_EQ(stages[0].last_job, tried);
  EXPECT_EQ(stages[1].stage, "reduction/3");
  EXPECT_TRUE(stages[1].accepted);
  EXPECT_EQ(stages[1].attempts, 4);
  EXPECT_EQ(stages[1].best_time_ratio, 1.2);  // the too_slow job's 3.0 is not a best
  EXPECT_EQ(stages[1].best_time_ms, 0.3);
  EXPECT_EQ(stages[1].last_job, last);
}

TEST_P(StoreTest, TheLeaderboardRanksEachOptedInLearnersBestAcceptedJob) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob b").learner;
  auto cyd = store.create_learner("cyd").learner;
  auto dan = store.create_learner("dan").learner;
  for (auto id : {ada.id, bob.id, cyd.id}) store.set_leaderboard(id, true);
  // ada: the gate ratio is the baseline's when present (0.7), not the reference's (2.0).
  finished_job(store, ada.id, "reduction/3", "accepted", 2.0, 0.7, 0.25, "python");
  finished_job(store, ada.id, "reduction/3", "accepted", 0.5, 0.9);
  // bob: best of two; a faster but wrong job does not count.
  finished_job(store, bob.id, "reduction/3", "accepted", 0.8);
  finished_job(store, bob.id, "reduction/3", "accepted", 0.6);
  finished_job(store, bob.id, "reduction/3", "wrong_answer", 0.1);
  // cyd: accepted only on another stage; dan: not opted in.
  finished_job(store, cyd.id, "reduction/2", "accepted", 0.1);
  finished_job(store, dan.id, "reduction/3", "accepted", 0.2);
  auto board = store.leaderboard("reduction/3", 50);
  ASSERT_EQ(board.size(), 2u);
  EXPECT_EQ(board[0].name, "bob b");
  EXPECT_EQ(board[0].time_ratio, 0.6);
  EXPECT_EQ(board[1].name, "ada");
  EXPECT_EQ(board[1].time_ratio, 0.7);
  EXPECT_EQ(board[1].time_ms, 0.25);
  EXPECT_EQ(board[1].language, "python");
  EXPECT_GT(board[1].at, 0);
  EXPECT_EQ(store.leaderboard("reduction/3", 1).size(), 1u);
  store.set_leaderboard(bob.id, false);
  ASSERT_EQ(store.leaderboard("reduction/3", 50).size(), 1u);
  EXPECT_EQ(store.leaderboard("reduction/3", 50)[0].name, "ada");
}

// Two nodes on one database take different jobs, however their claims interleave.
TEST_P(StoreTest, TwoNodesNeverShareAJob) {
  Store& first = reopen();
  Store& second = another();
  auto learner = first.create_learner("ada").learner;
  for (int i = 0; i < 60; ++i) first.enqueue(learner.id, "reduction/2", "x");
  std::mutex mutex;
  std::vector<std::int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      Store& node = t % 2 ? second : first;
      const std::string holder = t % 2 ? "node-b#1" : "node-a#1";
      while (auto job = node.claim_next(holder, kLease)) {
        EXPECT_TRUE(node.finish(job->claim(), "compile_error", "{}"));
        std::lock_guard lock(mutex);
        claimed.push_back(job->id);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(claimed.size(), 60u);
  EXPECT_EQ(std::set<std::int64_t>(claimed.begin(), claimed.end()).size(), 60u);
  EXPECT_EQ(first.pending_count(), 0);
}

// A judge presumed dead that comes back cannot record over the judge that took its job.
TEST_P(StoreTest, OnlyTheCurrentClaimRecordsAResult) {
  Store& store = reopen();
  auto learner = store.create_learner("ada").learner;
  const auto id = store.enqueue(learner.id, "reduction/2", "x");
  const auto lost = store.claim_next("node-a#1", kLapsedLease);
  ASSERT_TRUE(lost.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(store.requeue_expired(), 1);
  EXPECT_EQ(store.job(id)->state, JobState::kQueued);
  EXPECT_FALSE(store.finish(lost->claim(), "accepted", "{}"));  // queued: nobody's
  const auto taken = store.claim_next("node-b#1", kLease);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->attempts, 2);
  EXPECT_FALSE(store.set_phase(lost->claim(), "tests"));
  EXPECT_FALSE(store.finish(lost->claim(), "accepted", "{}"));  // running, but under b's claim
  EXPECT_FALSE(store.requeue(lost->claim(), "back"));
  EXPECT_TRUE(store.finish(taken->claim(), "wrong_answer", "{}"));
  EXPECT_EQ(store.job(id)->verdict, std::optional<std::string>("wrong_answer"));
  // The same node name under an earlier attempt is not the current claim either.
  JobClaim earlier = taken->claim();
  earlier.attempt = 1;
  EXPECT_FALSE(store.finish(earlier, "accepted", "{}"));
}

// Only the claims a node names are renewed: a job it claimed but does not know it holds (the
// claim's answer was lost) lapses like a dead node's.
TEST_P(StoreTest, RenewedLeasesKeepTheirJobsAndLapsedOnesReturn) {
  Store& store = reopen();
  auto learner = store.create_learner("ada").learner;
  store.enqueue(learner.id, "reduction/2", "kept");
  store.enqueue(learner.id, "reduction/2", "lost answer");
  store.enqueue(learner.id, "reduction/2", "lapsed");
  const auto kept = store.claim_next("node-a#1", 0.3);
  const auto unknown = store.claim_next("node-a#1", 0.3);
  const auto lapsed = store.claim_next("node-b#1", 0.3);
  ASSERT_TRUE(kept && unknown && lapsed);
  JobClaim stale = kept->claim();
  stale.attempt += 1;  // not the current claim: not renewed
  EXPECT_EQ(store.renew_leases({kept->claim(), stale}, kLease), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(store.requeue_expired(), 2);
  EXPECT_EQ(store.job(kept->id)->state, JobState::kRunning);
  EXPECT_EQ(store.job(unknown->id)->state, JobState::kQueued);
  EXPECT_EQ(store.job(lapsed->id)->state, JobState::kQueued);
  EXPECT_FALSE(store.job(lapsed->id)->holder.has_value());
  EXPECT_EQ(store.requeue_expired(), 0);
}

TEST_P(StoreTest, NodesRegisterTheirGpuAndAreListedWhileSeen) {
  Store& store = reopen();
  store.register_node({"gpu-1", "host-a", "NVIDIA H200", 8, false});
  store.register_node({"web-1", "host-b", "none", 0, true});
  store.register_node({"gpu-1", "host-a", "NVIDIA H200", 4, false});  // a heartbeat with a change
  auto nodes = store.nodes(60);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "gpu-1");
  EXPECT_EQ(nodes[0].gpu, "NVIDIA H200");
  EXPECT_EQ(nodes[0].workers, 4);
  EXPECT_FALSE(nodes[0].http);
  EXPECT_GE(nodes[0].last_seen, nodes[0].started_at);
  EXPECT_TRUE(nodes[1].http);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  store.register_node({"web-1", "host-b", "none", 0, true});
  nodes = store.nodes(0.5);  // gpu-1 has not beaten since
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "web-1");
}

TEST_F(PostgresStoreTest, TheSchemaIsVersionedAndANewerOneIsRefused) {
  reopen();
  EXPECT_EQ(testing::sql_value(location_, "SELECT version FROM cudojo_schema"), "2");
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

// A database of schema version 1 (before submission keys) gains the column at open, its jobs kept.
TEST_F(PostgresStoreTest, AVersionOneDatabaseIsMigrated) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto old_job = store.enqueue(ada.id, "reduction/3", "kept");
  store_.reset();
  ASSERT_EQ(testing::sql_value(location_,
                               "DROP INDEX jobs_by_client_key; ALTER TABLE jobs DROP COLUMN client_key;"
                               " UPDATE cudojo_schema SET version = 1"),
            "");
  Store& migrated = reopen();
  EXPECT_EQ(testing::sql_value(location_, "SELECT version FROM cudojo_schema"), "2");
  EXPECT_EQ(migrated.job(old_job)->source, "kept");
  EXPECT_FALSE(migrated.submit({ada.id, "reduction/3", "new", "cuda", "key-1"}).replayed);
  EXPECT_TRUE(migrated.submit({ada.id, "reduction/3", "new", "cuda", "key-1"}).replayed);
}

// The same learner sending the same key again gets the job queued the first time, whatever
// the limits say now; the key with another submission is refused; another learner's key is theirs.
TEST_P(StoreTest, ASubmissionKeyQueuesOnce) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto bob = store.create_learner("bob").learner;
  const QueueLimits one_each{10, 1};
  const Enqueued first = store.submit({ada.id, "reduction/3", "source", "cuda", "k1"}, one_each);
  EXPECT_FALSE(first.replayed);
  const Enqueued again = store.submit({ada.id, "reduction/3", "source", "cuda", "k1"}, one_each);
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(store.pending_count(ada.id), 1);
  EXPECT_EQ(error_code([&] {
              store.submit({ada.id, "reduction/3", "other source", "cuda", "k1"}, one_each);
            }),
            StoreErrorCode::kKeyReused);
  EXPECT_EQ(error_code([&] {
              store.submit({ada.id, "reduction/3", "source", "cuda", "k2"}, one_each);
            }),
            StoreErrorCode::kLearnerBusy);
  EXPECT_NE(store.submit({bob.id, "reduction/3", "source", "cuda", "k1"}, one_each).id, first.id);
  // Without a key, every submission is its own.
  EXPECT_NE(store.enqueue(ada.id, "reduction/3", "source"), store.enqueue(ada.id, "reduction/3", "source"));
}

// One key sent at once by many clients through two nodes queues one job.
TEST_P(StoreTest, OneKeySentConcurrentlyThroughTwoNodesQueuesOneJob) {
  Store& first = reopen();
  Store& second = another();
  const auto ada = first.create_learner("ada").learner;
  std::mutex mutex;
  std::set<std::int64_t> ids;
  int replayed = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const Enqueued queued =
          (t % 2 ? second : first).submit({ada.id, "reduction/2", "x", "cuda", "same-key"});
      std::lock_guard lock(mutex);
      ids.insert(queued.id);
      replayed += queued.replayed;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(replayed, 7);
  EXPECT_EQ(first.pending_count(), 1);
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

}  // namespace
}  // namespace cudojo

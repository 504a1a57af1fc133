#include "serve/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

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
  }
}

namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("cudojo_store_test_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
  }
  void TearDown() override { fs::remove_all(path_); }
  fs::path file() const { return path_ / "cudojo.sqlite3"; }
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
};

TEST_F(StoreTest, TokensAuthenticateAndOnlyTheirDigestIsStored) {
  std::string token;
  {
    Store store(file());
    IssuedLearner issued = store.create_learner("ada");
    token = issued.token;
    EXPECT_EQ(token.size(), 64u);
    auto found = store.find_learner_by_token(token);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->name, "ada");
    EXPECT_FALSE(store.find_learner_by_token(token + "x").has_value());
    EXPECT_FALSE(store.find_learner_by_token("").has_value());
  }
  // The database file never contains the token itself.
  std::ifstream in(file(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(bytes.find(token), std::string::npos);
  EXPECT_NE(bytes.find(token_digest(token)), std::string::npos);
}

TEST_F(StoreTest, NamesAreUniqueAndChecked) {
  Store store(file());
  store.create_learner("ada");
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kNameTaken);
  EXPECT_EQ(error_code([&] { store.create_learner(""); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner(std::string(41, 'a')); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("robert'); DROP TABLE jobs;--"); }),
            StoreErrorCode::kInvalidName);
}

TEST_F(StoreTest, NamesMayHoldSingleSpacesAndAreTrimmed) {
  Store store(file());
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

TEST_F(StoreTest, TheLeaderboardFlagIsOffUntilSetAndSurvivesReopening) {
  std::string token;
  {
    Store store(file());
    auto issued = store.create_learner("ada");
    token = issued.token;
    EXPECT_FALSE(store.find_learner_by_token(token)->leaderboard);
    auto updated = store.set_leaderboard(issued.learner.id, true);
    ASSERT_TRUE(updated.has_value());
    EXPECT_TRUE(updated->leaderboard);
    EXPECT_EQ(updated->name, "ada");
    EXPECT_FALSE(store.set_leaderboard(999, true).has_value());
  }
  Store store(file());
  EXPECT_TRUE(store.find_learner_by_token(token)->leaderboard);
}

// A database from before the leaderboard flag (schema version 1) gains it, every learner opted out,
// and its jobs are kept.
TEST_F(StoreTest, AVersionOneDatabaseIsMigrated) {
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
  Store store(file());
  auto ada = store.set_leaderboard(1, false);
  ASSERT_TRUE(ada.has_value());
  EXPECT_EQ(ada->name, "ada");
  EXPECT_EQ(store.job(1)->language, "python");
  EXPECT_TRUE(store.set_leaderboard(1, true)->leaderboard);
}

TEST_F(StoreTest, AFileThatIsNotADatabaseIsAnInternalError) {
  fs::create_directories(path_);
  std::ofstream(file(), std::ios::binary) << std::string(4096, 'x');
  EXPECT_EQ(error_code([&] { Store store(file()); }), StoreErrorCode::kInternal);
}

TEST_F(StoreTest, AFailingInsertIsAnInternalErrorNotTheCallersMistake) {
  Store store(file());
  ASSERT_TRUE(testing::refuse_new_learners(file()));
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kInternal);
}

TEST_F(StoreTest, AWriteLockHeldElsewhereFailsAfterTheBusyTimeout) {
  constexpr int kBusyTimeoutMs = 200;
  Store store(file(), kBusyTimeoutMs);
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

TEST_F(StoreTest, JobsRunInOrderAndFinishOnce) {
  Store store(file());
  auto learner = store.create_learner("ada").learner;
  const auto first = store.enqueue(learner.id, "reduction/3", "a");
  const auto second = store.enqueue(learner.id, "reduction/3", "b");
  EXPECT_EQ(store.pending_count(), 2);
  EXPECT_EQ(store.queued_count(), 2);
  EXPECT_EQ(store.queue_position(second), 1);
  auto claimed = store.claim_next();
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->id, first);
  EXPECT_EQ(claimed->state, JobState::kRunning);
  EXPECT_EQ(store.queue_position(second), 0);
  EXPECT_EQ(store.queued_count(), 1);  // the running job is pending but no longer queued
  store.set_phase(first, "tests");
  EXPECT_EQ(store.job(first)->phase, "tests");
  EXPECT_TRUE(store.finish(first, "accepted", "{}"));
  EXPECT_FALSE(store.finish(first, "wrong_answer", "{}"));  // never twice
  EXPECT_EQ(store.job(first)->verdict, std::optional<std::string>("accepted"));
  EXPECT_EQ(store.pending_count(), 1);
}

TEST_F(StoreTest, RestartRequeuesInterruptedJobsAndLosesNone) {
  std::int64_t running = 0, queued = 0;
  {
    Store store(file());
    auto learner = store.create_learner("ada").learner;
    running = store.enqueue(learner.id, "reduction/2", "x");
    queued = store.enqueue(learner.id, "reduction/2", "y");
    ASSERT_EQ(store.claim_next()->id, running);
  }  // the server stops with one job running and one queued
  Store store(file());
  EXPECT_EQ(store.requeue_interrupted(), 1);
  EXPECT_EQ(store.job(running)->state, JobState::kQueued);
  EXPECT_EQ(store.claim_next()->id, running);
  EXPECT_EQ(store.claim_next()->id, queued);
  EXPECT_FALSE(store.claim_next().has_value());
}

TEST_F(StoreTest, AJobInterruptedTooOftenFailsInsteadOfLooping) {
  Store store(file());
  auto learner = store.create_learner("ada").learner;
  const auto id = store.enqueue(learner.id, "reduction/2", "x");
  for (int attempt = 0; attempt < Store::kMaxAttempts; ++attempt) {
    ASSERT_TRUE(store.claim_next().has_value());
    store.requeue_interrupted();
  }
  auto job = store.job(id);
  EXPECT_EQ(job->state, JobState::kDone);
  EXPECT_EQ(job->verdict, std::optional<std::string>("internal_error"));
}

TEST_F(StoreTest, ConcurrentClaimsNeverShareAJob) {
  Store store(file());
  auto learner = store.create_learner("ada").learner;
  for (int i = 0; i < 40; ++i) store.enqueue(learner.id, "reduction/2", "x");
  std::mutex mutex;
  std::vector<std::int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (auto job = store.claim_next()) {
        std::lock_guard lock(mutex);
        claimed.push_back(job->id);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(claimed.size(), 40u);
  EXPECT_EQ(std::set<std::int64_t>(claimed.begin(), claimed.end()).size(), 40u);
}

TEST_F(StoreTest, JobsAreTakenRoundRobinByLearner) {
  Store store(file());
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  auto cy = store.create_learner("cy").learner;
  const auto a1 = store.enqueue(ada.id, "reduction/2", "a1");
  const auto a2 = store.enqueue(ada.id, "reduction/2", "a2");
  const auto a3 = store.enqueue(ada.id, "reduction/2", "a3");
  const auto b1 = store.enqueue(bob.id, "reduction/2", "b1");
  const auto c1 = store.enqueue(cy.id, "reduction/2", "c1");
  std::vector<std::int64_t> order;
  while (auto job = store.claim_next()) {
    order.push_back(job->id);
    // Claims a moment apart, as jobs that each take time to judge.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(order, (std::vector<std::int64_t>{a1, b1, c1, a2, a3}));
}

TEST_F(StoreTest, QueueLimitsHoldUnderABurstOfSubmissions) {
  Store store(file());
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

TEST_F(StoreTest, HistoryIsPerLearnerNewestFirst) {
  Store store(file());
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
  auto claimed = store.claim_next();
  EXPECT_TRUE(claimed && claimed->id == id);
  nlohmann::json metrics = nlohmann::json::object();
  if (time_ratio >= 0) metrics["time_ratio"] = time_ratio;
  if (baseline_ratio >= 0) metrics["baseline_ratio"] = baseline_ratio;
  if (median_ms >= 0) metrics["time_ms"] = {{"median", median_ms}, {"min", median_ms}};
  EXPECT_TRUE(store.finish(id, verdict, nlohmann::json{{"verdict", verdict}, {"metrics", metrics}}.dump()));
  return id;
}

TEST_F(StoreTest, HistoryPagesWithACursorAndReadsRatiosFromTheReport) {
  Store store(file());
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

TEST_F(StoreTest, ProgressCountsFinishedJobsAndKeepsTheBestAccepted) {
  Store store(file());
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

TEST_F(StoreTest, TheLeaderboardRanksEachOptedInLearnersBestAcceptedJob) {
  Store store(file());
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

}  // namespace
}  // namespace cudojo

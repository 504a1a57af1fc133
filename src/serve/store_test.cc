#include "serve/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

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

}  // namespace
}  // namespace cudojo

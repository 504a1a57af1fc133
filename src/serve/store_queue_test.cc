// Store tests of submitting, on both stores: the queue's limits under bursts through one node or
// two, submission keys that queue a job once, and a learner withdrawing a job still queued.
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

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

namespace {

// A submission of `learner` from `address` (empty: none), with an optional key.
Submission from(std::int64_t learner, const std::string& address, const std::string& key = "") {
  return {learner, "reduction/2", "source", "cuda", key, address};
}

QueueLimits per_address(std::int64_t limit) {
  QueueLimits limits;
  limits.max_pending_per_address = limit;
  return limits;
}

}  // namespace

// However a burst from one address spreads over learners and nodes, the address gets its share and
// no more.
TEST_P(StoreTest, TheAddressShareHoldsUnderABurstOfSubmissions) {
  Store& first = reopen();
  Store& second = another();
  const auto ada = first.create_learner("ada").learner;
  const auto bob = first.create_learner("bob").learner;
  const QueueLimits limits = per_address(4);
  std::atomic<int> accepted{0}, address_busy{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 24; ++t) {
    threads.emplace_back([&, t] {
      try {
        (t % 2 ? second : first).submit(from(t % 4 < 2 ? ada.id : bob.id, "203.0.113.7"), limits);
        ++accepted;
      } catch (const StoreError& error) {
        if (error.code() == StoreErrorCode::kAddressBusy) ++address_busy;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(accepted, 4);
  EXPECT_EQ(address_busy, 20);
  EXPECT_EQ(first.pending_count(), 4);
}

TEST_P(StoreTest, EachAddressGetsItsOwnShare) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto bob = store.create_learner("bob").learner;
  const QueueLimits limits = per_address(2);
  store.submit(from(ada.id, "198.51.100.1"), limits);
  store.submit(from(bob.id, "198.51.100.1"), limits);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "198.51.100.1"), limits); }),
            StoreErrorCode::kAddressBusy);
  store.submit(from(ada.id, "198.51.100.2"), limits);
  store.submit(from(ada.id, "198.51.100.2"), limits);
  try {
    store.submit(from(bob.id, "198.51.100.2"), limits);
    ADD_FAILURE() << "a third job from an address with a share of two was queued";
  } catch (const StoreError& error) {
    EXPECT_EQ(error.code(), StoreErrorCode::kAddressBusy);
    EXPECT_NE(std::string(error.what()).find("already has 2 jobs waiting or running"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("try again when one of them finishes"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(store.pending_count(), 4);
}

// The queue's limit is told first, then the learner's, then the address's.
TEST_P(StoreTest, TheQueueThenTheLearnerThenTheAddressRefuse) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto bob = store.create_learner("bob").learner;
  const QueueLimits limits{3, 2, 1};
  store.submit(from(ada.id, "192.0.2.1"), limits);
  EXPECT_EQ(error_code([&] { store.submit(from(bob.id, "192.0.2.1"), limits); }),
            StoreErrorCode::kAddressBusy);
  store.submit(from(ada.id, "192.0.2.2"), limits);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.1"), limits); }),
            StoreErrorCode::kLearnerBusy);
  store.submit(from(bob.id, "192.0.2.3"), limits);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.1"), limits); }), StoreErrorCode::kQueueFull);
}

// A job without an address (queued by a tool) is never limited by a share and takes no one's.
TEST_P(StoreTest, AJobWithoutAnAddressHasNoShareToFill) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const QueueLimits limits = per_address(1);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(error_code([&] { store.submit(from(ada.id, ""), limits); }), std::nullopt) << "job " << i;
  }
  EXPECT_EQ(error_code([&] { store.enqueue(ada.id, "reduction/2", "x", limits); }), std::nullopt);
  store.submit(from(ada.id, "192.0.2.1"), limits);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.1"), limits); }),
            StoreErrorCode::kAddressBusy);
  EXPECT_EQ(store.pending_count(), 7);
}

// The share counts jobs waiting or running: a running job keeps its place, a finished one frees it.
TEST_P(StoreTest, AFinishedJobFreesItsPlaceInTheAddressShare) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const QueueLimits limits = per_address(2);
  store.submit(from(ada.id, "192.0.2.9"), limits);
  store.submit(from(ada.id, "192.0.2.9"), limits);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.9"), limits); }),
            StoreErrorCode::kAddressBusy);
  const auto running = store.claim_next(kNode, kLease);
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.9"), limits); }),
            StoreErrorCode::kAddressBusy);
  ASSERT_TRUE(store.finish(running->claim(), "accepted", "{}"));
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.9"), limits); }), std::nullopt);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.9"), limits); }),
            StoreErrorCode::kAddressBusy);
}

// A submission sent again under its key is the job queued the first time, whatever the share says.
TEST_P(StoreTest, AReplayedSubmissionIsNotCountedAgainstItsAddress) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const QueueLimits limits = per_address(1);
  const Enqueued first = store.submit(from(ada.id, "192.0.2.5", "k1"), limits);
  const Enqueued again = store.submit(from(ada.id, "192.0.2.5", "k1"), limits);
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(error_code([&] { store.submit(from(ada.id, "192.0.2.5", "k2"), limits); }),
            StoreErrorCode::kAddressBusy);
}

// A learner takes back their own queued job; never someone else's, never one a judge has claimed.
TEST_P(StoreTest, OnlyTheOwnerWithdrawsAJobAndOnlyWhileItIsQueued) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  const auto running = store.enqueue(ada.id, "reduction/3", "first");
  const auto waiting = store.enqueue(ada.id, "reduction/3", "second");
  const auto behind = store.enqueue(bob.id, "reduction/3", "third");
  ASSERT_TRUE(store.claim_next(kNode, kLease));
  EXPECT_EQ(store.queue_position(behind), 1);
  EXPECT_FALSE(store.withdraw_queued(waiting, bob.id));
  EXPECT_FALSE(store.withdraw_queued(running, ada.id));
  EXPECT_TRUE(store.withdraw_queued(waiting, ada.id));
  EXPECT_FALSE(store.withdraw_queued(waiting, ada.id));
  EXPECT_FALSE(store.job(waiting).has_value());
  EXPECT_EQ(store.queue_position(behind), 0);
  EXPECT_EQ(store.pending_count(ada.id), 1);
  ASSERT_TRUE(store.job(running).has_value());
  EXPECT_EQ(store.job(running)->state, JobState::kRunning);
}

}  // namespace cudojo::store_test

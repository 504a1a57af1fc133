// Store tests of the jobs' lives, on both stores: claimed in order and round robin, never by two
// judges at once, recorded only under the current claim, leases renewed or lapsed, jobs taken back
// after a restart, and the nodes that hold them; a profiled job's Nsight Compute report, kept under
// its claim within the size limit.
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

TEST_P(StoreTest, JobsRunInOrderAndFinishOnce) {
  Store& store = reopen();
  auto learner = store.create_learner("ada").learner;
  const auto first = store.enqueue(learner.id, "reduction/3", "a");
  const auto second = store.enqueue(learner.id, "reduction/3", "b");
  EXPECT_EQ(store.pending_count(), 2);
  EXPECT_EQ(store.job(second)->state, JobState::kQueued);
  EXPECT_EQ(store.queue_position(second), 1);
  auto claimed = store.claim_next(kNode, kLease);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->id, first);
  EXPECT_EQ(claimed->state, JobState::kRunning);
  EXPECT_EQ(store.queue_position(second), 0);
  EXPECT_EQ(store.pending_count(), 2);  // the running job is pending but no longer queued
  EXPECT_EQ(store.job(second)->state, JobState::kQueued);
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

namespace {

// What job_progress answers, by id (it answers in any order).
std::map<std::int64_t, JobProgress> progress_by_id(Store& store, const std::vector<std::int64_t>& ids) {
  std::map<std::int64_t, JobProgress> by_id;
  for (const JobProgress& job : store.job_progress(ids)) {
    EXPECT_TRUE(by_id.emplace(job.id, job).second) << "job " << job.id << " answered twice";
  }
  return by_id;
}

}  // namespace

// Every job's state, phase and place in the queue in one call, as job() and queue_position() give
// them one at a time.
TEST_P(StoreTest, JobProgressGivesEachJobsStatePhaseAndPosition) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto first = store.enqueue(ada.id, "reduction/2", "a");
  const auto second = store.enqueue(ada.id, "reduction/2", "b");
  const auto third = store.enqueue(ada.id, "reduction/2", "c");
  const auto fourth = store.enqueue(ada.id, "reduction/2", "d");
  const auto running = store.claim_next(kNode, kLease);
  ASSERT_TRUE(running && running->id == first);
  ASSERT_TRUE(store.set_phase(running->claim(), "tests"));
  const std::vector<std::int64_t> ids{fourth, first, third + 1000, third, second};
  auto progress = progress_by_id(store, ids);
  ASSERT_EQ(progress.size(), 4u);  // the unknown id is left out
  EXPECT_EQ(progress[first].state, JobState::kRunning);
  EXPECT_EQ(progress[first].phase, "tests");
  EXPECT_EQ(progress[first].position, 0);
  EXPECT_EQ(progress[second].state, JobState::kQueued);
  EXPECT_EQ(progress[second].phase, "queued");
  EXPECT_EQ(progress[second].position, 0);
  EXPECT_EQ(progress[third].position, 1);
  EXPECT_EQ(progress[fourth].position, 2);
  for (const auto id : {first, second, third, fourth}) {
    EXPECT_EQ(progress[id].position, store.queue_position(id)) << "job " << id;
  }
  // The next claim moves every job behind it up one place.
  const auto next = store.claim_next(kNode, kLease);
  ASSERT_TRUE(next && next->id == second);
  progress = progress_by_id(store, ids);
  EXPECT_EQ(progress[second].state, JobState::kRunning);
  EXPECT_EQ(progress[second].phase, "starting");
  EXPECT_EQ(progress[second].position, 0);
  EXPECT_EQ(progress[third].position, 0);
  EXPECT_EQ(progress[fourth].position, 1);
  // A finished job is done, with no place in the queue.
  ASSERT_TRUE(store.finish(running->claim(), "accepted", "{}"));
  progress = progress_by_id(store, ids);
  EXPECT_EQ(progress[first].state, JobState::kDone);
  EXPECT_EQ(progress[first].phase, "done");
  EXPECT_EQ(progress[first].position, 0);
  EXPECT_EQ(progress[fourth].position, 1);
}

TEST_P(StoreTest, JobProgressOfNoKnownJobsIsEmpty) {
  Store& store = reopen();
  EXPECT_TRUE(store.job_progress({}).empty());
  EXPECT_TRUE(store.job_progress({1, 2, 3}).empty());
  const auto ada = store.create_learner("ada").learner;
  const auto id = store.enqueue(ada.id, "reduction/2", "a");
  EXPECT_TRUE(store.job_progress({}).empty());
  EXPECT_TRUE(store.job_progress({id + 1, -1}).empty());
}

// The event streams ask about every open stream's job (up to a thousand) in one call.
TEST_P(StoreTest, JobProgressAnswersAThousandJobsInOneCall) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  ASSERT_TRUE(testing::insert_queued_jobs(location_, ada.id, 1000));
  std::vector<std::int64_t> ids;
  for (const JobSummary& job : store.history(ada.id, std::nullopt, 2000)) ids.push_back(job.id);
  ASSERT_EQ(ids.size(), 1000u);
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(store.claim_next(kNode, kLease)->id, ids[0]);
  ASSERT_EQ(store.claim_next(kNode, kLease)->id, ids[1]);
  auto progress = progress_by_id(store, ids);
  ASSERT_EQ(progress.size(), 1000u);
  EXPECT_EQ(progress[ids[0]].state, JobState::kRunning);
  EXPECT_EQ(progress[ids[1]].state, JobState::kRunning);
  for (std::size_t place = 2; place < ids.size(); ++place) {
    ASSERT_EQ(progress[ids[place]].state, JobState::kQueued) << "job " << ids[place];
    ASSERT_EQ(progress[ids[place]].position, static_cast<std::int64_t>(place) - 2) << "job " << ids[place];
  }
  EXPECT_EQ(progress[ids[999]].position, store.queue_position(ids[999]));
}

// A profiled job's Nsight Compute report: its bytes as they were (NULs, every byte value), kept only
// under the job's current claim, replaced by a later one, never empty or over the limit.
TEST_P(StoreTest, AProfiledJobKeepsItsNcuReportUnderItsClaimWithinTheLimit) {
  Store& store = reopen();
  const auto learner = store.create_learner("ada").learner.id;
  const auto plain = store.enqueue(learner, "reduction/3", "a");
  Submission asked{learner, "reduction/3", "b", "cuda", "", ""};
  asked.profile = true;
  const auto profiled = store.submit(asked).id;
  EXPECT_FALSE(store.job(plain)->profile);
  EXPECT_TRUE(store.job(profiled)->profile);
  EXPECT_EQ(store.job(profiled)->ncu_report_bytes, std::nullopt);
  const auto first = store.claim_next(kNode, kLease);
  ASSERT_TRUE(first && first->id == plain && !first->profile);
  const auto claimed = store.claim_next(kNode, kLease);
  ASSERT_TRUE(claimed && claimed->id == profiled && claimed->profile);

  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes += static_cast<char>(i % 256);
  EXPECT_FALSE(store.keep_ncu_report({profiled, "another-node#2", claimed->attempts}, bytes));
  EXPECT_FALSE(store.keep_ncu_report({profiled, kNode, claimed->attempts + 1}, bytes));
  EXPECT_EQ(store.ncu_report(profiled), std::nullopt) << "kept under a claim that is not current";
  EXPECT_FALSE(store.keep_ncu_report(claimed->claim(), ""));
  const std::string over(JudgeLimits{}.max_ncu_report_bytes + 1, 'x');
  EXPECT_FALSE(store.keep_ncu_report(claimed->claim(), over));
  EXPECT_EQ(store.ncu_report(profiled), std::nullopt) << "a report over the limit was kept";

  EXPECT_TRUE(store.keep_ncu_report(claimed->claim(), "an earlier report"));
  EXPECT_TRUE(store.keep_ncu_report(claimed->claim(), bytes));  // replaces it
  EXPECT_TRUE(store.finish(claimed->claim(), "accepted", "{}"));
  EXPECT_EQ(store.ncu_report(profiled), std::optional<std::string>(bytes));
  EXPECT_EQ(store.job(profiled)->ncu_report_bytes, std::optional<std::int64_t>(4096));
  EXPECT_EQ(store.ncu_report(plain), std::nullopt);
  EXPECT_EQ(store.job(plain)->ncu_report_bytes, std::nullopt);
  EXPECT_FALSE(store.keep_ncu_report(claimed->claim(), "after the result")) << "the job is done";
  EXPECT_EQ(another().ncu_report(profiled), std::optional<std::string>(bytes)) << "seen by another node";

  // Exactly the limit is kept.
  const auto largest = store.submit({learner, "reduction/3", "c", "cuda", "", ""}).id;
  const auto third = store.claim_next(kNode, kLease);
  ASSERT_TRUE(third && third->id == largest);
  const std::string limit(JudgeLimits{}.max_ncu_report_bytes, 'r');
  EXPECT_TRUE(store.keep_ncu_report(third->claim(), limit));
  EXPECT_EQ(store.job(largest)->ncu_report_bytes,
            std::optional<std::int64_t>(static_cast<std::int64_t>(limit.size())));
  EXPECT_EQ(store.ncu_report(largest)->size(), limit.size());
}

TEST_P(StoreTest, AReportKeptByAnAttemptThatLostItsJobIsGoneOnceTheJobIsClaimedAgain) {
  // The attempt kept its report and then lost its lease: its result is never recorded, and the
  // next attempt's verdict must not be served with the lost attempt's report.
  Store& store = reopen();
  const auto learner = store.create_learner("ada").learner.id;
  Submission asked{learner, "reduction/3", "b", "cuda", "", ""};
  asked.profile = true;
  const auto profiled = store.submit(asked).id;
  const auto lost = store.claim_next(kNode, kLapsedLease);
  ASSERT_TRUE(lost && lost->id == profiled);
  ASSERT_TRUE(store.keep_ncu_report(lost->claim(), "the lost attempt's report"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(store.requeue_expired(), 1);
  const auto again = store.claim_next(kNode, kLease);
  ASSERT_TRUE(again && again->id == profiled);
  EXPECT_EQ(store.ncu_report(profiled), std::nullopt) << "the lost attempt's report outlived its claim";
  EXPECT_EQ(store.job(profiled)->ncu_report_bytes, std::nullopt);
  EXPECT_TRUE(store.finish(again->claim(), "wrong_answer", "{}"));
  EXPECT_EQ(store.ncu_report(profiled), std::nullopt);
}

}  // namespace cudojo::store_test

// Store tests of the queries over jobs, on both stores: history and its pages, progress per stage,
// and leaderboards, with the numbers read out of stored reports.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

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

// no_device and internal_error are the judge's failures, not the learner's: no attempt, no stage begun.
TEST_P(StoreTest, AJobTheJudgeCouldNotJudgeIsNoAttempt) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  finished_job(store, ada.id, "reduction/3", "no_device", -1);
  finished_job(store, ada.id, "reduction/3", "internal_error", -1);
  const auto counted = finished_job(store, ada.id, "reduction/3", "wrong_answer", -1);
  finished_job(store, ada.id, "reduction/3", "no_device", -1);
  finished_job(store, ada.id, "atomics/1", "no_device", -1);
  auto stages = store.progress(ada.id);
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages[0].stage, "reduction/3");
  EXPECT_EQ(stages[0].attempts, 1);
  EXPECT_EQ(stages[0].last_job, counted);
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
  const std::int64_t everyone = store.classes().default_class().id;
  auto board = store.leaderboard(everyone, "reduction/3", 50);
  ASSERT_EQ(board.size(), 2u);
  EXPECT_EQ(board[0].name, "bob b");
  EXPECT_EQ(board[0].time_ratio, 0.6);
  EXPECT_EQ(board[1].name, "ada");
  EXPECT_EQ(board[1].time_ratio, 0.7);
  EXPECT_EQ(board[1].time_ms, 0.25);
  EXPECT_EQ(board[1].language, "python");
  EXPECT_GT(board[1].at, 0);
  EXPECT_EQ(store.leaderboard(everyone, "reduction/3", 1).size(), 1u);
  store.set_leaderboard(bob.id, false);
  ASSERT_EQ(store.leaderboard(everyone, "reduction/3", 50).size(), 1u);
  EXPECT_EQ(store.leaderboard(everyone, "reduction/3", 50)[0].name, "ada");
}

// Each row names the GPU its job was judged on (the report's gpu.name; none when the report has
// none) and the learner it is, so the route can mark the caller's own row.
TEST_P(StoreTest, ALeaderboardRowNamesItsGpuAndItsLearner) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  for (auto id : {ada.id, bob.id}) store.set_leaderboard(id, true);
  store.enqueue(ada.id, "reduction/3", "source");
  auto claimed = store.claim_next(kNode, kLease);
  ASSERT_TRUE(claimed);
  ASSERT_TRUE(store.finish(
      claimed->claim(), "accepted",
      nlohmann::json{
          {"verdict", "accepted"}, {"gpu", {{"name", "NVIDIA L4"}}}, {"metrics", {{"time_ratio", 0.9}}}}
          .dump()));
  finished_job(store, bob.id, "reduction/3", "accepted", 1.1);  // a report without a gpu
  auto board = store.leaderboard(store.classes().default_class().id, "reduction/3", 50);
  ASSERT_EQ(board.size(), 2u);
  EXPECT_EQ(board[0].learner_id, ada.id);
  EXPECT_EQ(board[0].gpu, std::optional<std::string>("NVIDIA L4"));
  EXPECT_EQ(board[1].learner_id, bob.id);
  EXPECT_FALSE(board[1].gpu.has_value());
}

}  // namespace cudojo::store_test

// Store tests of rejudgings (serve/store_rejudging.h), on both stores: reruns hidden from everything
// a learner, a grid or a leaderboard reads; claimed after every learner's job; the summary before and
// after; applied as a whole (each job keeping its own submission time) or cancelled with nothing
// changed; a rerun whose judge died judged again, once.
#include <nlohmann/json.hpp>

#include "serve/store_internal.h"
#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

namespace {

const Actor kInstructor{"instructor", 7, "Prof Ada"};

AuditNote rejudge_note(const std::string& action) {
  return {kInstructor, std::nullopt, action, "by the test"};
}

// Finishes the next claimable job with `verdict`, a time ratio and a stage version in its report.
std::int64_t finish_next(Store& store, const std::string& verdict, double time_ratio,
                         const std::string& version, const std::string& holder = kNode) {
  auto claimed = store.claim_next(holder, kLease);
  EXPECT_TRUE(claimed);
  if (!claimed) return 0;
  const nlohmann::json report = {{"verdict", verdict},
                                 {"metrics", {{"time_ratio", time_ratio}}},
                                 {"stage_version", {{"digest", version}}}};
  EXPECT_TRUE(store.finish(claimed->claim(), verdict, report.dump()));
  return claimed->id;
}

// A learner's job, queued and judged under `version`.
std::int64_t judged_job(Store& store, std::int64_t learner, const std::string& verdict, double ratio,
                        const std::string& version = "v1", const std::string& stage = "reduction/3") {
  const auto id = store.enqueue(learner, stage, "source of " + std::to_string(learner));
  EXPECT_EQ(finish_next(store, verdict, ratio, version), id);
  return id;
}

// Everything a learner and the class's grid and leaderboard show, as text, to compare before/after.
std::string what_learners_see(Store& store, std::int64_t learner, std::int64_t class_id) {
  nlohmann::json seen = nlohmann::json::array();
  for (const JobSummary& job : store.history(learner, std::nullopt, 100))
    seen.push_back({job.id, job.verdict.value_or("-"), job.time_ratio.value_or(-1)});
  for (const StageProgress& stage : store.progress(learner))
    seen.push_back({stage.stage, stage.accepted, stage.attempts, stage.best_time_ratio.value_or(-1)});
  for (const GridCell& cell : store.classes().class_grid(class_id))
    seen.push_back({cell.learner_id, cell.stage, cell.attempts, cell.accepted, cell.best_ratio.value_or(-1)});
  for (const LeaderboardEntry& entry : store.leaderboard(class_id, "reduction/3", 50))
    seen.push_back({entry.name, entry.time_ratio});
  seen.push_back({store.pending_count(learner), store.pending_count()});
  return seen.dump();
}

RejudgeFilter stage_filter(const std::string& stage = "reduction/3") {
  RejudgeFilter filter;
  filter.stage = stage;
  return filter;
}

}  // namespace

TEST_P(StoreTest, RerunsAreHiddenFromLearnersGridsAndLeaderboards) {
  Store& store = reopen();
  const std::int64_t everyone = store.classes().default_class().id;
  auto ada = store.create_learner("ada").learner;
  store.set_leaderboard(ada.id, true);
  judged_job(store, ada.id, "accepted", 1.2);
  judged_job(store, ada.id, "wrong_answer", 0.5);
  const std::string before = what_learners_see(store, ada.id, everyone);
  const Rejudging made = store.rejudgings().create_rejudging(stage_filter(), "{}", "gate tightened", 100,
                                                             rejudge_note("rejudging.create"));
  EXPECT_EQ(made.jobs, 2);
  EXPECT_EQ(made.state, RejudgingState::kJudging);
  EXPECT_EQ(what_learners_see(store, ada.id, everyone), before) << "queued reruns leaked";
  // Judged, and still not applied: nothing a learner sees moves.
  finish_next(store, "too_slow", 2.5, "v2");
  finish_next(store, "too_slow", 2.5, "v2");
  EXPECT_EQ(what_learners_see(store, ada.id, everyone), before) << "judged reruns leaked";
  // The rerun is a job row, but never the learner's to list or count.
  EXPECT_EQ(store.history(ada.id, std::nullopt, 100).size(), 2u);
}

TEST_P(StoreTest, LearnersJobsAreClaimedBeforeReruns) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  judged_job(store, ada.id, "accepted", 1.0);
  store.rejudgings().create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("rejudging.create"));
  const auto waiting = store.enqueue(bob.id, "reduction/1", "bob's");
  EXPECT_EQ(store.queue_position(waiting), 0) << "a rerun counted as ahead of a learner's job";
  EXPECT_EQ(store.job_progress({waiting}).at(0).position, 0);
  auto first = store.claim_next(kNode, kLease);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, waiting);
  EXPECT_FALSE(first->rejudging_id);
  auto second = store.claim_next(kNode, kLease);
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->rejudging_id);
  EXPECT_EQ(second->learner_id, ada.id);
}

TEST_P(StoreTest, ApplySwapsEveryResultAndKeepsEachJobsOwnTime) {
  Store& store = reopen();
  const std::int64_t everyone = store.classes().default_class().id;
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  const auto fast = judged_job(store, ada.id, "accepted", 1.2);
  const auto slow = judged_job(store, bob.id, "accepted", 1.8);
  const double submitted = store.job(slow)->created_at;
  const Rejudging made =
      store.rejudgings().create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("rejudging.create"));
  // Applying before every rerun is judged is refused, as a whole.
  EXPECT_EQ(error_code([&] { store.rejudgings().apply_rejudging(made.id, rejudge_note("rejudging.apply")); }),
            StoreErrorCode::kConflict);
  finish_next(store, "accepted", 1.25, "v2");  // ada's rerun (oldest job first)
  finish_next(store, "too_slow", 2.1, "v2");   // bob's flips
  auto items = store.rejudgings().rejudging_items(made.id);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1].learner_name, "bob");
  EXPECT_EQ(items[1].before_verdict, "accepted");
  EXPECT_EQ(items[1].after_verdict, "too_slow");
  EXPECT_EQ(items[1].before_version, "v1");
  EXPECT_EQ(items[1].after_version, "v2");
  EXPECT_EQ(store.job(slow)->verdict, "accepted") << "judged but not applied: the original stands";

  const auto applied = store.rejudgings().apply_rejudging(made.id, rejudge_note("rejudging.apply"));
  ASSERT_TRUE(applied);
  EXPECT_EQ(applied->state, RejudgingState::kApplied);
  EXPECT_EQ(store.job(slow)->verdict, "too_slow");
  EXPECT_EQ(store.job(fast)->verdict, "accepted");
  EXPECT_DOUBLE_EQ(store.job(slow)->created_at, submitted) << "a rejudged job counts from its own time";
  const auto bob_progress = store.progress(bob.id);
  ASSERT_EQ(bob_progress.size(), 1u);
  EXPECT_FALSE(bob_progress[0].accepted);
  EXPECT_EQ(bob_progress[0].attempts, 1);
  for (const GridCell& cell : store.classes().class_grid(everyone)) {
    if (cell.learner_id == ada.id) EXPECT_EQ(cell.best_ratio, 1.25);
    if (cell.learner_id == bob.id) EXPECT_FALSE(cell.accepted);
  }
  // After applying, the items still read before -> after (the rerun row keeps the old result).
  items = store.rejudgings().rejudging_items(made.id);
  EXPECT_EQ(items[1].before_verdict, "accepted");
  EXPECT_EQ(items[1].after_verdict, "too_slow");
  EXPECT_EQ(items[1].before_version, "v1");
  // Once ended, it cannot be applied or cancelled again.
  EXPECT_EQ(error_code([&] { store.rejudgings().apply_rejudging(made.id, rejudge_note("rejudging.apply")); }),
            StoreErrorCode::kConflict);
  EXPECT_EQ(
      error_code([&] { store.rejudgings().cancel_rejudging(made.id, rejudge_note("rejudging.cancel")); }),
      StoreErrorCode::kConflict);
  // The versions now count the applied results.
  bool counted = false;
  for (const StageVersionCount& count : store.rejudgings().stage_versions(everyone)) {
    if (count.stage == "reduction/3" && count.version == std::optional<std::string>("v2")) {
      EXPECT_EQ(count.jobs, 2);
      counted = true;
    }
  }
  EXPECT_TRUE(counted);
}

TEST_P(StoreTest, CancelLeavesEverythingAsItWasAndDropsARunningRerun) {
  Store& store = reopen();
  const std::int64_t everyone = store.classes().default_class().id;
  auto ada = store.create_learner("ada").learner;
  judged_job(store, ada.id, "accepted", 1.0);
  judged_job(store, ada.id, "accepted", 1.1);
  const std::string before = what_learners_see(store, ada.id, everyone);
  const Rejudging made =
      store.rejudgings().create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("rejudging.create"));
  finish_next(store, "wrong_answer", 0, "v2");
  auto running = store.claim_next(kNode, kLease);  // the second rerun, mid-judging
  ASSERT_TRUE(running && running->rejudging_id);
  const auto cancelled = store.rejudgings().cancel_rejudging(made.id, rejudge_note("rejudging.cancel"));
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->state, RejudgingState::kCancelled);
  EXPECT_FALSE(store.finish(running->claim(), "accepted", "{}")) << "a cancelled rerun's result was recorded";
  EXPECT_EQ(what_learners_see(store, ada.id, everyone), before);
  EXPECT_EQ(store.pending_count(), 0) << "a cancelled rerun is still waiting or running";
  // The jobs are free for the next rejudging.
  EXPECT_EQ(store.rejudgings()
                .create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("rejudging.create"))
                .jobs,
            2);
}

TEST_P(StoreTest, FiltersChooseJobsAndRefuseNoneOrTooMany) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  auto bob = store.create_learner("bob").learner;
  judged_job(store, ada.id, "accepted", 1.0, "old");
  judged_job(store, ada.id, "too_slow", 3.0, "new");
  judged_job(store, bob.id, "accepted", 1.0, "new");
  judged_job(store, bob.id, "accepted", 1.0, "new", "reduction/4");
  RejudgeStore& rejudgings = store.rejudgings();
  RejudgeFilter older = stage_filter();
  older.not_version = "new";
  EXPECT_EQ(rejudgings.create_rejudging(older, "{}", "", 100, rejudge_note("x")).jobs, 1);
  // That job is taken while its rejudging judges: the same filter finds none left.
  EXPECT_EQ(error_code([&] { rejudgings.create_rejudging(older, "{}", "", 100, rejudge_note("x")); }),
            StoreErrorCode::kConflict);
  RejudgeFilter accepted = stage_filter();
  accepted.verdict = "accepted";
  accepted.learner_id = bob.id;
  EXPECT_EQ(rejudgings.create_rejudging(accepted, "{}", "", 100, rejudge_note("x")).jobs, 1);
  RejudgeFilter everything;
  EXPECT_EQ(error_code([&] { rejudgings.create_rejudging(everything, "{}", "", 1, rejudge_note("x")); }),
            StoreErrorCode::kConflict)
      << "more jobs than the limit must be refused, not cut";
  RejudgeFilter later = stage_filter("reduction/4");
  later.since = store_internal::now_seconds() + 3600;
  EXPECT_EQ(error_code([&] { rejudgings.create_rejudging(later, "{}", "", 100, rejudge_note("x")); }),
            StoreErrorCode::kConflict);
  EXPECT_EQ(rejudgings.list_rejudgings(std::nullopt).size(), 2u);
}

TEST_P(StoreTest, ARerunWhoseJudgeDiedIsJudgedAgainOnce) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  judged_job(store, ada.id, "accepted", 1.0);
  const Rejudging made =
      store.rejudgings().create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("rejudging.create"));
  auto lost = store.claim_next("node-dead#1", kLapsedLease);
  ASSERT_TRUE(lost && lost->rejudging_id);
  EXPECT_EQ(another().requeue_expired(), 1);
  finish_next(store, "too_slow", 2.0, "v2", "node-b#1");
  EXPECT_FALSE(store.finish(lost->claim(), "accepted", "{}")) << "the dead judge's late result counted";
  const auto found = store.rejudgings().find_rejudging(made.id);
  EXPECT_EQ(found->judged, 1);
  const auto items = store.rejudgings().rejudging_items(made.id);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].after_verdict, "too_slow");
}

TEST_P(StoreTest, ApplyIsRefusedWhenARerunGotNoVerdictOnTheKernelOrVersionsDiffer) {
  Store& store = reopen();
  auto ada = store.create_learner("ada").learner;
  const auto job = judged_job(store, ada.id, "accepted", 1.0);
  judged_job(store, ada.id, "accepted", 1.1);
  RejudgeStore& rejudgings = store.rejudgings();
  // A judge that failed (or had no GPU) must not replace a learner's real result.
  const Rejudging failed = rejudgings.create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("x"));
  finish_next(store, "internal_error", 0, "v2");
  finish_next(store, "accepted", 1.0, "v2");
  EXPECT_EQ(error_code([&] { rejudgings.apply_rejudging(failed.id, rejudge_note("x")); }),
            StoreErrorCode::kConflict);
  EXPECT_EQ(store.job(job)->verdict, "accepted");
  rejudgings.cancel_rejudging(failed.id, rejudge_note("x"));
  // Reruns of one stage judged under two versions (a reload in the middle): refused too.
  const Rejudging mixed = rejudgings.create_rejudging(stage_filter(), "{}", "", 100, rejudge_note("x"));
  finish_next(store, "accepted", 1.0, "v2");
  finish_next(store, "accepted", 1.0, "v3");
  EXPECT_EQ(error_code([&] { rejudgings.apply_rejudging(mixed.id, rejudge_note("x")); }),
            StoreErrorCode::kConflict);
}

// A rerun is profiled as its job was; applied, each job's Nsight Compute report moves with the
// verdict it came with; cancelled, the reruns' reports go with them.
TEST_P(StoreTest, RerunsKeepTheProfileFlagAndTheirReportsFollowTheVerdicts) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner.id;
  Submission asked{ada, "reduction/3", "profiled", "cuda", "", ""};
  asked.profile = true;
  const auto original = store.submit(asked).id;
  const auto plain = store.enqueue(ada, "reduction/3", "plain");
  for (int i = 0; i < 2; ++i) {
    const auto claimed = store.claim_next(kNode, kLease);
    ASSERT_TRUE(claimed);
    if (claimed->profile) EXPECT_TRUE(store.keep_ncu_report(claimed->claim(), "report of the original"));
    EXPECT_TRUE(store.finish(claimed->claim(), "accepted", "{}"));
  }
  const std::string count_reports = "SELECT COUNT(*) FROM ncu_reports";
  for (const bool apply : {false, true}) {
    const Rejudging made = store.rejudgings().create_rejudging(stage_filter(), "{}", "again", 100,
                                                               rejudge_note("rejudging.create"));
    std::int64_t rerun = 0;
    for (int i = 0; i < 2; ++i) {
      const auto claimed = store.claim_next(kNode, kLease);
      ASSERT_TRUE(claimed && claimed->rejudging_id == made.id);
      const auto of = store.job(claimed->id);
      ASSERT_TRUE(of);
      if (claimed->profile) {
        rerun = claimed->id;
        EXPECT_TRUE(store.keep_ncu_report(claimed->claim(), "report of the rerun"));
      }
      EXPECT_TRUE(store.finish(claimed->claim(), "too_slow", "{}"));
    }
    ASSERT_GT(rerun, 0) << "the profiled job's rerun was not profiled";
    EXPECT_EQ(testing::sql_value(location_, count_reports), "2");
    if (!apply) {
      ASSERT_TRUE(store.rejudgings().cancel_rejudging(made.id, rejudge_note("rejudging.cancel")));
      EXPECT_EQ(testing::sql_value(location_, count_reports), "1") << "a cancelled rerun's report stayed";
      EXPECT_EQ(store.ncu_report(original), std::optional<std::string>("report of the original"));
      continue;
    }
    ASSERT_TRUE(store.rejudgings().apply_rejudging(made.id, rejudge_note("rejudging.apply")));
    EXPECT_EQ(store.ncu_report(original), std::optional<std::string>("report of the rerun"));
    EXPECT_EQ(store.ncu_report(rerun), std::optional<std::string>("report of the original"));
    EXPECT_EQ(store.ncu_report(plain), std::nullopt);
  }
}

}  // namespace cudojo::store_test

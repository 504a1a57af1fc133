// Store tests of links to one job (serve/store_shares.h), on both stores: made by the job's owner
// only, for a finished job only; only the token's digest stored; a new link stopping the one before;
// a stopped link opening nothing; the cap on a learner's live links; nothing opened once the job is no
// learner's finished job or its learner was removed; a class's staff listing and stopping its
// learners' links, and turning links off for the class.
#include "serve/store_shares.h"

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

namespace {

constexpr std::int64_t kManyLinks = 50;

AuditNote staff_note(std::int64_t class_id, const std::string& action) {
  return {{"instructor", 7, "Prof Ada"}, class_id, action, "a test"};
}

// The live link of `learner`'s job `job`, or nullopt.
std::optional<JobShare> live_link(Store& store, std::int64_t job, std::int64_t learner) {
  auto link = store.shares().job_share(job, learner);
  return link && !link->revoked_at ? link : std::nullopt;
}

// A learner of `class_id`, joined by invite.
Learner learner_in(Store& store, std::int64_t class_id, const std::string& name) {
  NewLearner learner;
  learner.name = name;
  learner.class_id = class_id;
  learner.origin = LearnerOrigin::kInvite;
  return store.add_learner(learner).learner;
}

}  // namespace

TEST_P(StoreTest, TheOwnerSharesAFinishedJobAndTheLinkOpensIt) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const std::int64_t job = finished_job(store, ada.id, "reduction/3", "accepted", 1.1);
  const auto issued = store.shares().create_share(job, ada.id, kManyLinks);
  ASSERT_TRUE(issued.has_value());
  EXPECT_EQ(issued->token.size(), 64u);
  EXPECT_EQ(issued->share.job_id, job);
  EXPECT_GT(issued->share.created_at, 0);
  const auto opened = store.shares().shared_job(issued->token);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(opened->id, job);
  EXPECT_EQ(opened->source, "source");
  EXPECT_EQ(opened->verdict, "accepted");
  const auto live = live_link(store, job, ada.id);
  ASSERT_TRUE(live.has_value());
  EXPECT_DOUBLE_EQ(live->created_at, issued->share.created_at);
  // Anything else opens nothing.
  for (const std::string& other : {std::string(), issued->token + "0", issued->token.substr(1),
                                   std::string(64, '0'), std::string(129, 'a'), token_digest(issued->token)})
    EXPECT_FALSE(store.shares().shared_job(other).has_value()) << other;
}

TEST_P(StoreTest, OnlyTheJobsOwnerSharesItAndOnlyOnceItIsFinished) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto bob = store.create_learner("bob").learner;
  const std::int64_t done = finished_job(store, ada.id, "reduction/3", "wrong_answer", -1);
  EXPECT_FALSE(store.shares().create_share(done, bob.id, kManyLinks).has_value()) << "another learner's job";
  EXPECT_FALSE(store.shares().create_share(done + 100, ada.id, kManyLinks).has_value()) << "no such job";
  EXPECT_FALSE(store.shares().revoke_share(done, bob.id));
  EXPECT_FALSE(live_link(store, done, bob.id).has_value());
  const std::int64_t queued = store.enqueue(ada.id, "reduction/2", "waiting");
  EXPECT_EQ(error_code([&] { store.shares().create_share(queued, ada.id, kManyLinks); }),
            StoreErrorCode::kConflict);
  ASSERT_TRUE(store.claim_next(kNode, kLease).has_value());
  EXPECT_EQ(error_code([&] { store.shares().create_share(queued, ada.id, kManyLinks); }),
            StoreErrorCode::kConflict)
      << "a running job is not finished either";
  EXPECT_FALSE(live_link(store, queued, ada.id).has_value());
  // Bob's attempt left Ada's job unshared, and hers works.
  EXPECT_FALSE(live_link(store, done, ada.id).has_value());
  EXPECT_TRUE(store.shares().create_share(done, ada.id, kManyLinks).has_value());
}

TEST_P(StoreTest, OnlyTheLinksDigestIsStored) {
  std::string token;
  {
    Store& store = reopen();
    const auto ada = store.create_learner("ada").learner;
    const std::int64_t job = finished_job(store, ada.id, "reduction/3", "accepted", 1.1);
    token = store.shares().create_share(job, ada.id, kManyLinks)->token;
  }
  expect_only_digest_stored("job_shares", token);
  // The link outlives the store's restart.
  EXPECT_TRUE(reopen().shares().shared_job(token).has_value());
}

TEST_P(StoreTest, AStoppedLinkOpensNothingAndANewLinkStopsTheOneBefore) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const std::int64_t job = finished_job(store, ada.id, "reduction/3", "accepted", 1.1);
  const std::string first = store.shares().create_share(job, ada.id, kManyLinks)->token;
  const std::string second = store.shares().create_share(job, ada.id, kManyLinks)->token;
  EXPECT_NE(first, second);
  EXPECT_FALSE(store.shares().shared_job(first).has_value()) << "the link before the new one still opens";
  EXPECT_TRUE(store.shares().shared_job(second).has_value());
  EXPECT_EQ(testing::sql_value(location_, "SELECT COUNT(*) FROM job_shares"), "1") << "one row per job";

  EXPECT_TRUE(store.shares().revoke_share(job, ada.id));
  EXPECT_FALSE(store.shares().revoke_share(job, ada.id)) << "stopped already";
  EXPECT_FALSE(store.shares().shared_job(second).has_value());
  EXPECT_FALSE(live_link(store, job, ada.id).has_value());
  EXPECT_EQ(testing::sql_value(location_, "SELECT COUNT(*) FROM job_shares WHERE revoked_at IS NOT NULL"),
            "1");
  // Shared again: a new link, the stopped one still closed.
  const std::string third = store.shares().create_share(job, ada.id, kManyLinks)->token;
  EXPECT_TRUE(store.shares().shared_job(third).has_value());
  EXPECT_FALSE(store.shares().shared_job(second).has_value());
}

TEST_P(StoreTest, ALearnersLiveLinksAreCapped) {
  Store& store = reopen();
  const auto ada = store.create_learner("ada").learner;
  const auto bob = store.create_learner("bob").learner;
  std::vector<std::int64_t> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(finished_job(store, ada.id, "reduction/3", "accepted", 1.1));
  const std::int64_t bobs = finished_job(store, bob.id, "reduction/3", "accepted", 1.1);
  EXPECT_TRUE(store.shares().create_share(jobs[0], ada.id, 2).has_value());
  EXPECT_TRUE(store.shares().create_share(jobs[1], ada.id, 2).has_value());
  EXPECT_EQ(error_code([&] { store.shares().create_share(jobs[2], ada.id, 2); }), StoreErrorCode::kConflict);
  // A new link to a job already shared is no new one; another learner has links of their own.
  EXPECT_TRUE(store.shares().create_share(jobs[1], ada.id, 2).has_value());
  EXPECT_TRUE(store.shares().create_share(bobs, bob.id, 2).has_value());
  // A stopped link gives its place back.
  EXPECT_TRUE(store.shares().revoke_share(jobs[0], ada.id));
  EXPECT_TRUE(store.shares().create_share(jobs[2], ada.id, 2).has_value());
}

TEST_P(StoreTest, ALinkOpensNothingOnceItsLearnerIsRemoved) {
  Store& store = reopen();
  const ClassInfo everyone = store.classes().default_class();
  const auto ada = store.create_learner("ada").learner;
  const std::int64_t job = finished_job(store, ada.id, "reduction/3", "accepted", 1.1);
  const std::string token = store.shares().create_share(job, ada.id, kManyLinks)->token;
  LearnerChange removal;
  removal.removed = true;
  ASSERT_TRUE(
      store.classes()
          .change_learner(everyone.id, ada.id, removal, {{"console", 0, "test"}, everyone.id, "test", ""})
          .has_value());
  EXPECT_FALSE(store.shares().shared_job(token).has_value());
  // Whoever removed the learner stopped the link, not the learner.
  EXPECT_EQ(store.shares().job_share(job, ada.id)->stopped_by, "test");
}

TEST_P(StoreTest, AClassesStaffListItsLiveLinksAndStopOneWithItsAuditEntry) {
  Store& store = reopen();
  const ClassInfo a = store.classes().create_class("A", staff_note(0, "class.create"));
  const ClassInfo b = store.classes().create_class("B", staff_note(0, "class.create"));
  const Learner ada = learner_in(store, a.id, "ada");
  const Learner cy = learner_in(store, a.id, "cy");
  const Learner bo = learner_in(store, b.id, "bo");
  const std::int64_t adas = finished_job(store, ada.id, "reduction/3", "accepted", 1.1);
  const std::int64_t cys = finished_job(store, cy.id, "reduction/4", "wrong_answer", 0);
  const std::int64_t bos = finished_job(store, bo.id, "reduction/3", "accepted", 1.1);
  const std::string adas_link = store.shares().create_share(adas, ada.id, kManyLinks)->token;
  store.shares().create_share(cys, cy.id, kManyLinks);
  store.shares().create_share(bos, bo.id, kManyLinks);
  store.shares().revoke_share(cys, cy.id);  // stopped by its learner: not listed

  const auto listed = store.shares().class_shares(a.id, 10);
  ASSERT_EQ(listed.size(), 1u) << "class B's link, or a stopped one, was listed";
  EXPECT_EQ(listed[0].job_id, adas);
  EXPECT_EQ(listed[0].learner_name, "ada");
  EXPECT_EQ(listed[0].stage, "reduction/3");
  EXPECT_EQ(listed[0].verdict, "accepted");
  EXPECT_EQ(store.shares().class_shares(a.id, 0).size(), 0u);

  // Class A's staff reach neither class B's job nor a link already stopped.
  EXPECT_FALSE(store.shares().stop_class_share(a.id, bos, staff_note(a.id, "share.stop")));
  EXPECT_FALSE(store.shares().stop_class_share(a.id, cys, staff_note(a.id, "share.stop")));
  EXPECT_TRUE(store.shares().shared_job(store.shares().create_share(bos, bo.id, kManyLinks)->token));
  EXPECT_TRUE(store.shares().stop_class_share(a.id, adas, staff_note(a.id, "share.stop")));
  EXPECT_FALSE(store.shares().shared_job(adas_link).has_value());
  const auto stopped = store.shares().job_share(adas, ada.id);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_TRUE(stopped->revoked_at.has_value());
  EXPECT_EQ(stopped->stopped_by, "Prof Ada");
  EXPECT_EQ(store.shares().job_share(cys, cy.id)->stopped_by, std::nullopt) << "its learner stopped it";
  const auto audit = store.classes().audit(a.id, std::nullopt, 10);
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit.front().action, "share.stop");
  EXPECT_EQ(
      std::count_if(audit.begin(), audit.end(), [](const AuditEntry& e) { return e.action == "share.stop"; }),
      1)
      << "a stop that stopped nothing was written down";
  // Its learner may link it again: the new link is theirs, with nobody's stop on it.
  EXPECT_TRUE(store.shares().create_share(adas, ada.id, kManyLinks).has_value());
  EXPECT_EQ(store.shares().job_share(adas, ada.id)->stopped_by, std::nullopt);
}

TEST_P(StoreTest, TurningAClassesLinksOffStopsEveryLiveOneForGoodAndRefusesNewOnes) {
  Store& store = reopen();
  const ClassInfo a = store.classes().create_class("A", staff_note(0, "class.create"));
  const ClassInfo b = store.classes().create_class("B", staff_note(0, "class.create"));
  EXPECT_TRUE(a.sharing_open);
  const Learner ada = learner_in(store, a.id, "ada");
  const Learner bo = learner_in(store, b.id, "bo");
  const std::int64_t adas = finished_job(store, ada.id, "reduction/3", "accepted", 1.1);
  const std::int64_t bos = finished_job(store, bo.id, "reduction/3", "accepted", 1.1);
  const std::string adas_link = store.shares().create_share(adas, ada.id, kManyLinks)->token;
  const std::string bos_link = store.shares().create_share(bos, bo.id, kManyLinks)->token;

  ClassChange off;
  off.sharing_open = false;
  const auto changed = store.classes().change_class(a.id, off, staff_note(a.id, "class.change"));
  ASSERT_TRUE(changed.has_value());
  EXPECT_FALSE(changed->sharing_open);
  EXPECT_FALSE(store.classes().find_class(a.id)->sharing_open);
  EXPECT_FALSE(store.shares().shared_job(adas_link).has_value());
  EXPECT_EQ(store.shares().job_share(adas, ada.id)->stopped_by, "Prof Ada");
  EXPECT_TRUE(store.shares().shared_job(bos_link).has_value()) << "another class's link was stopped";
  EXPECT_EQ(error_code([&] { store.shares().create_share(adas, ada.id, kManyLinks); }),
            StoreErrorCode::kNotAllowed);

  // Turned on again, the links stopped stay stopped; a new one opens.
  ClassChange on;
  on.sharing_open = true;
  store.classes().change_class(a.id, on, staff_note(a.id, "class.change"));
  EXPECT_FALSE(store.shares().shared_job(adas_link).has_value());
  const auto again = store.shares().create_share(adas, ada.id, kManyLinks);
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE(store.shares().shared_job(again->token).has_value());
}

}  // namespace cudojo::store_test

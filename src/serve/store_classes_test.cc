// Store tests of classes (serve/store_classes.h), on both stores: staff and roles, rosters imported
// whole or not at all, tokens handed out and reset, the grid's one query, drafts, and an audit entry
// written with every change and only with it.
#include <algorithm>
#include <thread>

#include "serve/store_internal.h"
#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

namespace {

const Actor kConsole{"console", 0, "test"};

AuditNote note(std::optional<std::int64_t> class_id, const std::string& action) {
  return {kConsole, class_id, action, "by the test"};
}

std::int64_t audit_count(ClassStore& classes) {
  return static_cast<std::int64_t>(classes.audit(std::nullopt, std::nullopt, 1000).size());
}

}  // namespace

TEST_P(StoreTest, StaffHoldRolesPerClassAndTheirTokensAuthenticate) {
  ClassStore& classes = reopen().classes();
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  const ClassInfo b = classes.create_class("B", note(std::nullopt, "class.create"));
  EXPECT_NE(a.invite_code, b.invite_code);
  EXPECT_FALSE(a.is_default);
  const IssuedStaff ia = classes.create_staff("Prof Ada", false, note(std::nullopt, "staff.create"));
  EXPECT_EQ(error_code([&] { classes.create_staff("Prof Ada", true, note(std::nullopt, "staff.create")); }),
            StoreErrorCode::kNameTaken);
  EXPECT_EQ(error_code([&] { classes.create_staff("no<tags>", true, note(std::nullopt, "staff.create")); }),
            StoreErrorCode::kInvalidName);
  classes.set_class_role(a.id, ia.staff.id, ClassRole::kInstructor, note(a.id, "class.staff_add"));
  classes.set_class_role(b.id, ia.staff.id, ClassRole::kAssistant, note(b.id, "class.staff_add"));
  auto found = classes.find_staff_by_token(ia.token);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->roles, (std::map<std::int64_t, ClassRole>{{a.id, ClassRole::kInstructor},
                                                             {b.id, ClassRole::kAssistant}}));
  // A second role in the same class replaces the first; removing it leaves the other class's.
  classes.set_class_role(b.id, ia.staff.id, ClassRole::kInstructor, note(b.id, "class.staff_add"));
  EXPECT_EQ(classes.class_staff(b.id).at(0).role, ClassRole::kInstructor);
  // A has another instructor now, so Prof Ada's role there can go.
  const auto bo = classes.create_staff("Prof Bo", false, note(std::nullopt, "staff.create")).staff.id;
  classes.set_class_role(a.id, bo, ClassRole::kInstructor, note(a.id, "class.staff_add"));
  EXPECT_TRUE(classes.remove_class_role(a.id, ia.staff.id, note(a.id, "class.staff_remove")));
  EXPECT_FALSE(classes.remove_class_role(a.id, ia.staff.id, note(a.id, "class.staff_remove")));
  EXPECT_EQ(classes.find_staff(ia.staff.id)->roles.size(), 1u);
  // A staff token is not a learner's, nor the reverse.
  EXPECT_FALSE(reopen().find_learner_by_token(ia.token));
  const auto reset =
      store_->classes().reset_staff_token(ia.staff.id, note(std::nullopt, "staff.token_reset"));
  ASSERT_TRUE(reset.has_value());
  EXPECT_FALSE(store_->classes().find_staff_by_token(ia.token));
  EXPECT_EQ(store_->classes().find_staff_by_token(*reset)->name, "Prof Ada");
  EXPECT_FALSE(store_->classes().reset_staff_token(999, note(std::nullopt, "staff.token_reset")));
}

TEST_P(StoreTest, ARosterIsImportedWholeOrNotAtAll) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  const auto before = audit_count(classes);
  const auto counts = classes.import_roster(a.id, {{"s1", "Ada", "ada@example.edu"}, {"s2", "Bob", ""}}, 0,
                                            note(a.id, "roster.import"));
  EXPECT_EQ(counts.created, 2);
  EXPECT_EQ(audit_count(classes), before + 1);
  // The second row takes Ada's name: nothing of the import is written, its audit entry neither.
  EXPECT_EQ(
      error_code([&] {
        classes.import_roster(a.id, {{"s3", "Cy", ""}, {"s4", "Ada", ""}}, 0, note(a.id, "roster.import"));
      }),
      StoreErrorCode::kNameTaken);
  EXPECT_EQ(classes.roster(a.id).size(), 2u);
  EXPECT_EQ(audit_count(classes), before + 1);
  // Nobody knows a roster learner's token until one is handed out; then only the new one works.
  const auto issued = classes.issue_tokens(a.id, true, note(a.id, "tokens.issue"));
  ASSERT_EQ(issued.size(), 2u);
  const auto ada = store.find_learner_by_token(issued[0].token);
  ASSERT_TRUE(ada.has_value());
  EXPECT_EQ(ada->name, "Ada");
  EXPECT_EQ(ada->student_id, "s1");
  EXPECT_EQ(ada->class_id, a.id);
  EXPECT_TRUE(classes.roster_entry(a.id, ada->id)->signed_in_at.has_value());          // its first use
  EXPECT_EQ(classes.issue_tokens(a.id, true, note(a.id, "tokens.issue")).size(), 1u);  // only Bob's again
  const auto renewed = classes.reset_learner_token(a.id, ada->id, note(a.id, "learner.token_reset"));
  ASSERT_TRUE(renewed.has_value());
  EXPECT_FALSE(store.find_learner_by_token(issued[0].token));
  EXPECT_EQ(store.find_learner_by_token(*renewed)->id, ada->id);
  EXPECT_FALSE(classes.reset_learner_token(a.id + 1, ada->id, note(a.id, "learner.token_reset")));
}

TEST_P(StoreTest, RemovingALearnerEndsTheirTokenAndKeepsTheirWork) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  NewLearner wanted;
  wanted.name = "Ada";
  wanted.class_id = a.id;
  const IssuedLearner ada = store.add_learner(wanted);
  const auto job = store.enqueue(ada.learner.id, "reduction/3", "kept");
  LearnerChange remove;
  remove.removed = true;
  EXPECT_TRUE(classes.change_learner(a.id, ada.learner.id, remove, note(a.id, "learner.remove"))->removed_at);
  EXPECT_FALSE(store.find_learner_by_token(ada.token));
  EXPECT_FALSE(store.learner_token_digest(ada.learner.id));  // and with it every stream ticket
  EXPECT_EQ(store.job(job)->source, "kept");
  EXPECT_EQ(classes.roster(a.id).size(), 1u);  // still on the roster, marked
  LearnerChange restore;
  restore.removed = false;
  restore.email = "ada@example.edu";
  const auto back = classes.change_learner(a.id, ada.learner.id, restore, note(a.id, "learner.restore"));
  EXPECT_FALSE(back->removed_at);
  EXPECT_FALSE(back->signed_in_at);  // a token must be handed out again
  EXPECT_EQ(back->email, "ada@example.edu");
  EXPECT_FALSE(store.find_learner_by_token(ada.token));
  EXPECT_FALSE(classes.change_learner(a.id, 999, restore, note(a.id, "learner.change")));
}

TEST_P(StoreTest, TheGridCountsEachLearnersFinishedJobsPerStage) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  auto learner_in = [&](std::int64_t class_id, const std::string& name) {
    NewLearner wanted;
    wanted.name = name;
    wanted.class_id = class_id;
    return store.add_learner(wanted).learner.id;
  };
  const auto ada = learner_in(a.id, "Ada"), bob = learner_in(a.id, "Bob"), other = learner_in(0, "Ada");
  const auto first = finished_job(store, ada, "reduction/3", "accepted", 0.9);
  finished_job(store, ada, "reduction/3", "accepted", 0.6, 0.4);  // the baseline's ratio is the gate's
  finished_job(store, ada, "reduction/3", "wrong_answer", 0.1);
  finished_job(store, bob, "reduction/2", "wrong_answer", 0.1);
  finished_job(store, other, "reduction/3", "accepted", 0.2);  // another class
  store.enqueue(bob, "reduction/2", "still queued");           // not finished: not counted
  auto cells = classes.class_grid(a.id);
  std::sort(cells.begin(), cells.end(),
            [](const GridCell& x, const GridCell& y) { return x.learner_id < y.learner_id; });
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].learner_id, ada);
  EXPECT_EQ(cells[0].attempts, 3);
  EXPECT_TRUE(cells[0].accepted);
  EXPECT_EQ(cells[0].best_ratio, 0.4);
  EXPECT_EQ(cells[0].first_accepted_at, store.job(first)->created_at);
  EXPECT_EQ(cells[0].late_jobs, 0);  // no deadline
  EXPECT_EQ(cells[1].stage, "reduction/2");
  EXPECT_EQ(cells[1].attempts, 1);
  EXPECT_FALSE(cells[1].accepted);
  EXPECT_FALSE(cells[1].best_ratio);
  // A deadline before every job makes each of them late; one after them, none.
  classes.set_deadline(a.id, {"reduction/3", 0, false}, note(a.id, "deadline.set"));
  for (const GridCell& cell : classes.class_grid(a.id))
    EXPECT_EQ(cell.late_jobs, cell.stage == "reduction/3" ? 3 : 0) << cell.stage;
  classes.set_deadline(a.id, {"reduction/3", store_internal::now_seconds() + 60, false},
                       note(a.id, "deadline.set"));
  for (const GridCell& cell : classes.class_grid(a.id)) EXPECT_EQ(cell.late_jobs, 0) << cell.stage;
  // A removed learner leaves the grid.
  LearnerChange remove;
  remove.removed = true;
  classes.change_learner(a.id, bob, remove, note(a.id, "learner.remove"));
  EXPECT_EQ(classes.class_grid(a.id).size(), 1u);
}

TEST_P(StoreTest, DraftsAreOnePerStageAndLanguageAndTheirLearnersOwn) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const auto ada = store.create_learner("ada").learner.id, bob = store.create_learner("bob").learner.id;
  const double first = classes.save_draft(ada, {"reduction/3", "cuda", "one", 0});
  const double second = classes.save_draft(ada, {"reduction/3", "cuda", "two", 0});
  EXPECT_GE(second, first);
  classes.save_draft(ada, {"reduction/3", "rust", "r", 0});
  classes.save_draft(ada, {"reduction/2", "cuda", "c", 0});
  const auto drafts = classes.drafts(ada, std::string("reduction/3"));
  ASSERT_EQ(drafts.size(), 2u);
  EXPECT_EQ(drafts[0].source, "two");
  EXPECT_EQ(drafts[1].language, "rust");
  EXPECT_EQ(classes.drafts(ada, std::nullopt).size(), 3u);
  EXPECT_TRUE(classes.drafts(bob, std::nullopt).empty());
  EXPECT_FALSE(classes.delete_draft(bob, "reduction/3", "cuda"));
  EXPECT_TRUE(classes.delete_draft(ada, "reduction/3", "cuda"));
  EXPECT_EQ(classes.drafts(ada, std::nullopt).size(), 2u);
}

TEST_P(StoreTest, ClassesChangeAndTheAuditLogPagesNewestFirst) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const ClassInfo everyone = classes.default_class();
  EXPECT_TRUE(everyone.is_default);
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  ClassChange change;
  change.name = "A, renamed";
  change.joining_open = false;
  change.new_invite_code = true;
  const auto changed = classes.change_class(a.id, change, note(a.id, "class.change"));
  EXPECT_EQ(changed->name, "A, renamed");
  EXPECT_FALSE(changed->joining_open);
  EXPECT_NE(changed->invite_code, a.invite_code);
  EXPECT_FALSE(classes.find_class_by_invite(a.invite_code));
  EXPECT_EQ(classes.find_class_by_invite(changed->invite_code)->id, a.id);
  EXPECT_FALSE(classes.change_class(999, change, note(999, "class.change")));
  EXPECT_EQ(classes.list_classes().size(), 2u);
  classes.set_deadline(a.id, {"reduction/3", 100, true}, note(a.id, "deadline.set"));
  classes.set_deadline(a.id, {"reduction/3", 200, false}, note(a.id, "deadline.set"));
  EXPECT_EQ(classes.deadlines(a.id).at(0).due_at, 200);
  EXPECT_TRUE(classes.deadlines(everyone.id).empty());
  EXPECT_TRUE(classes.clear_deadline(a.id, "reduction/3", note(a.id, "deadline.clear")));
  EXPECT_FALSE(
      classes.clear_deadline(a.id, "reduction/3", note(a.id, "deadline.clear")));  // nothing, no entry
  classes.record(note(a.id, "grid.export"));
  const auto newest = classes.audit(a.id, std::nullopt, 2);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0].action, "grid.export");
  EXPECT_EQ(newest[0].actor.name, "test");
  EXPECT_EQ(newest[1].action, "deadline.clear");
  const auto older = classes.audit(a.id, newest[1].id, 100);
  std::vector<std::string> actions;
  for (const AuditEntry& entry : older) actions.push_back(entry.action);
  EXPECT_EQ(actions,
            (std::vector<std::string>{"deadline.set", "deadline.set", "class.change", "class.create"}));
}

TEST_P(StoreTest, JoinsAndClassSizesAreCappedInTheInsertsOwnTransaction) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  // A roster's learners are not joins: they count for the class's size only.
  classes.import_roster(a.id, {{"s1", "Ada", ""}, {"s2", "Bob", ""}}, 0, note(a.id, "roster.import"));
  auto joiner = [&](const std::string& name, std::int64_t invites, std::int64_t size) {
    NewLearner wanted;
    wanted.name = name;
    wanted.class_id = a.id;
    wanted.origin = LearnerOrigin::kInvite;
    wanted.max_invites_per_hour = invites;
    wanted.max_class_learners = size;
    return error_code([&] { store.add_learner(wanted); });
  };
  EXPECT_EQ(joiner("Cy", 2, 0), std::nullopt);
  EXPECT_EQ(joiner("Di", 2, 0), std::nullopt);
  EXPECT_EQ(joiner("Ed", 2, 0), StoreErrorCode::kTooManyJoins);  // the third join this hour
  EXPECT_EQ(joiner("Ed", 0, 4), StoreErrorCode::kConflict);      // four learners: the class is full
  EXPECT_EQ(joiner("Ada", 0, 0), StoreErrorCode::kNameTaken);
  // An import that would make the class larger than its cap writes nothing.
  EXPECT_EQ(error_code([&] {
              classes.import_roster(a.id, {{"s5", "Fay", ""}}, 4, note(a.id, "roster.import"));
            }),
            StoreErrorCode::kConflict);
  EXPECT_EQ(classes.roster(a.id).size(), 4u);
}

TEST_P(StoreTest, AnImportNeverBringsBackARemovedLearnerWhoseNameIsFreeMeanwhile) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const ClassInfo a = classes.create_class("A", note(std::nullopt, "class.create"));
  classes.import_roster(a.id, {{"s1", "Ada", ""}}, 0, note(a.id, "roster.import"));
  const auto ada = classes.roster(a.id).at(0);
  classes.save_draft(ada.id, {"reduction/3", "cuda", "Ada's own", 0});
  LearnerChange remove;
  remove.removed = true;
  classes.change_learner(a.id, ada.id, remove, note(a.id, "learner.remove"));
  // Her student id on a later roster is refused (her drafts and work are hers), her name is free.
  EXPECT_EQ(error_code([&] {
              classes.import_roster(a.id, {{"s1", "Rita", ""}}, 0, note(a.id, "roster.import"));
            }),
            StoreErrorCode::kConflict);
  classes.import_roster(a.id, {{"s2", "Ada", ""}}, 0, note(a.id, "roster.import"));
  // Restoring her now would give two active learners one name: refused until one is renamed.
  LearnerChange restore;
  restore.removed = false;
  EXPECT_EQ(error_code([&] { classes.change_learner(a.id, ada.id, restore, note(a.id, "learner.restore")); }),
            StoreErrorCode::kNameTaken);
  restore.name = "Ada King";
  EXPECT_FALSE(classes.change_learner(a.id, ada.id, restore, note(a.id, "learner.restore"))->removed_at);
  EXPECT_EQ(classes.drafts(ada.id, std::nullopt).at(0).source, "Ada's own");
}

TEST_P(StoreTest, AClassKeepsAnInstructorEvenWhenTwoRemoveEachOtherAtOnce) {
  Store& store = reopen();
  ClassStore& classes = store.classes();
  const auto one = classes.create_staff("One", false, note(std::nullopt, "staff.create")).staff.id;
  const auto two = classes.create_staff("Two", false, note(std::nullopt, "staff.create")).staff.id;
  const ClassInfo solo = classes.create_class("Solo", note(std::nullopt, "class.create"));
  classes.set_class_role(solo.id, one, ClassRole::kAssistant,
                         note(solo.id, "class.staff_add"));  // none to keep
  classes.set_class_role(solo.id, one, ClassRole::kInstructor, note(solo.id, "class.staff_add"));
  EXPECT_EQ(
      error_code([&] { classes.set_class_role(solo.id, one, ClassRole::kAssistant, note(solo.id, "")); }),
      StoreErrorCode::kConflict);
  EXPECT_EQ(error_code([&] { classes.remove_class_role(solo.id, one, note(solo.id, "")); }),
            StoreErrorCode::kConflict);
  // Two instructors, each removing the other through a connection of their own, at the same moment.
  ClassStore& elsewhere = another().classes();
  for (int round = 0; round < 10; ++round) {
    const ClassInfo pair = classes.create_class("Pair", note(std::nullopt, "class.create"));
    classes.set_class_role(pair.id, one, ClassRole::kInstructor, note(pair.id, "class.staff_add"));
    classes.set_class_role(pair.id, two, ClassRole::kInstructor, note(pair.id, "class.staff_add"));
    std::thread first(
        [&] { error_code([&] { classes.remove_class_role(pair.id, two, note(pair.id, "")); }); });
    std::thread second(
        [&] { error_code([&] { elsewhere.remove_class_role(pair.id, one, note(pair.id, "")); }); });
    first.join();
    second.join();
    EXPECT_EQ(classes.class_staff(pair.id).size(), 1u) << "round " << round;
  }
}

}  // namespace cudojo::store_test

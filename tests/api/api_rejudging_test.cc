// Changing a course under a running class: rejudgings (who may start, read, apply and cancel them;
// the summary lists exactly the jobs that flip; applying moves the grid and the export, cancelling
// moves nothing), the course reloaded without a restart (a broken one refused), stage versions, no
// reference source ever sent to a learner, and a restart while a client holds an event stream.
#include <csignal>
#include <fstream>

#include "api_class_support.h"
#include "serve/store.h"

namespace cudojo::api_testing {
namespace {

// A job of `learner` judged now with `verdict`, its gate ratio and the stage version its report
// names, planted in the store as a judge records one.
std::int64_t judged(const std::string& location, std::int64_t learner, const std::string& stage,
                    const std::string& verdict, double ratio, const std::string& version) {
  json report = json::parse(report_with(ratio));
  report["stage_version"] = {{"digest", version}};
  return testing::insert_finished_job(location, learner, stage, verdict, report.dump());
}

// Judges every queued rerun as a judge node would (claim, then finish under the claim): `verdict_of`
// gives each its verdict and ratio from the original job's id.
template <typename Verdict>
int judge_reruns(const std::string& location, Verdict verdict_of) {
  auto store = open_store(location);
  int judged_now = 0;
  while (auto job = store->claim_next("test-judge#1", 30)) {
    EXPECT_TRUE(job->rejudging_id) << "a learner's job was waiting";
    const auto [verdict, ratio] = verdict_of(*job);
    json report = json::parse(report_with(ratio));
    report["stage_version"] = {{"digest", "v2"}};
    EXPECT_TRUE(store->finish(job->claim(), verdict, report.dump()));
    ++judged_now;
  }
  return judged_now;
}

class Rejudging : public ClassApi {
 protected:
  void SetUp() override {
    ClassApi::SetUp();
    if (IsSkipped()) return;
    admin_ = make_admin();
    start({"--workers", "0"});
    a_ = make_class(admin_, "Class A", "Ia");
    b_ = make_class(admin_, "Class B", "Ib");
    const Answer assistant =
        ask("POST", class_path(a_.id, "/staff"), a_.instructor, json{{"name", "Ta"}, {"role", "ta"}});
    ASSERT_EQ(assistant.status, 201) << assistant.text;
    assistant_ = assistant.body["token"].get<std::string>();
    ada_ = join(a_.invite, "Ada", "s1", &a_);
    bob_ = join(a_.invite, "Bob", "s2", &a_);
    cyd_ = join(b_.invite, "Cyd");
    ada_id_ = learner_id(ada_);
    bob_id_ = learner_id(bob_);
    cyd_id_ = learner_id(cyd_);
  }
  std::string admin_, assistant_, ada_, bob_, cyd_;
  MadeClass a_, b_;
  std::int64_t ada_id_ = 0, bob_id_ = 0, cyd_id_ = 0;
};

TEST_F(Rejudging, AnInstructorSeesWhatFlipsThenAppliesItAsAWhole) {
  const std::string at = store_location();
  const auto ada_fast = judged(at, ada_id_, "reduction/3", "accepted", 1.2, "v1");
  const auto bob_slow = judged(at, bob_id_, "reduction/3", "accepted", 1.9, "v1");
  judged(at, bob_id_, "reduction/2", "accepted", 1.0, "v1");
  const auto cyd_job = judged(at, cyd_id_, "reduction/3", "accepted", 1.9, "v1");
  const std::string rejudgings = class_path(a_.id, "/rejudgings");
  const json body = {{"stage", "reduction/3"}, {"reason", "gate 2.0 -> 1.5"}};
  // Who may start one: the class's instructors and administrators only.
  EXPECT_EQ(ask("POST", rejudgings, "", body).status, 401);
  EXPECT_EQ(ask("POST", rejudgings, ada_, body).status, 403);
  EXPECT_EQ(ask("POST", rejudgings, assistant_, body).status, 403);
  EXPECT_EQ(ask("POST", rejudgings, b_.instructor, body).status, 404);
  EXPECT_EQ(ask("POST", rejudgings, a_.instructor, json{{"stage", "reduction/99"}}).status, 400);
  EXPECT_EQ(ask("POST", rejudgings, a_.instructor, json{{"stages", "reduction/3"}}).status, 400);
  const Answer made = ask("POST", rejudgings, a_.instructor, body);
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.body["jobs"], 2) << "only class A's reduction/3 jobs";
  const std::string one = rejudgings + "/" + made.body["id"].dump();
  // Who may read it: the class's staff; not learners, not another class's staff.
  EXPECT_EQ(ask("GET", one, ada_).status, 403);
  EXPECT_EQ(ask("GET", one, b_.instructor).status, 404);
  EXPECT_EQ(ask("GET", rejudgings, assistant_).status, 200);
  EXPECT_EQ(ask("GET", "/api/rejudgings", a_.instructor).status, 403);
  EXPECT_EQ(ask("GET", "/api/rejudgings", admin_).body["rejudgings"].size(), 1u);
  // Not judged yet: applying is refused, and a learner cannot open a rerun as a job of theirs.
  EXPECT_EQ(ask("POST", one + "/apply", a_.instructor, std::string("{}")).status, 409);
  const json items = ask("GET", one + "?items=all", assistant_).body["items"];
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(ask("GET", "/api/jobs/" + items[0]["rerun"].dump(), ada_).status, 404);

  // A judge takes the reruns (they wait behind learners' jobs): Bob's no longer passes the gate.
  EXPECT_EQ(judge_reruns(at,
                         [&](const JobRecord& job) {
                           return job.learner_id == bob_id_
                                      ? std::pair<std::string, double>{"too_slow", 1.9}
                                      : std::pair<std::string, double>{"accepted", 1.25};
                         }),
            2);
  const Answer shown = ask("GET", one, a_.instructor);
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(shown.body["summary"]["judged"], 2);
  EXPECT_EQ(shown.body["summary"]["flipped"], 1);
  ASSERT_EQ(shown.body["flips"].size(), 1u);
  EXPECT_EQ(shown.body["flips"][0]["job"], bob_slow);
  EXPECT_EQ(shown.body["flips"][0]["before"]["verdict"], "accepted");
  EXPECT_EQ(shown.body["flips"][0]["after"]["verdict"], "too_slow");
  // Judged but not applied: the learner, the grid and the export still show the old verdict.
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(bob_slow), bob_).body["verdict"], "accepted");
  EXPECT_NE(ask("GET", class_path(a_.id, "/export"), a_.instructor).text.find("s2,Bob"), std::string::npos);
  const json grid_before = ask("GET", class_path(a_.id, "/grid"), a_.instructor).body;

  EXPECT_EQ(ask("POST", one + "/apply", assistant_, std::string("{}")).status, 403);
  const Answer applied = ask("POST", one + "/apply", a_.instructor, std::string("{}"));
  ASSERT_EQ(applied.status, 200) << applied.text;
  EXPECT_EQ(applied.body["state"], "applied");
  EXPECT_EQ(ask("POST", one + "/cancel", a_.instructor, std::string("{}")).status, 409);
  const Answer bob_job = ask("GET", "/api/jobs/" + std::to_string(bob_slow), bob_);
  EXPECT_EQ(bob_job.body["verdict"], "too_slow");
  EXPECT_EQ(bob_job.body["stage_version"], "v2");
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(ada_fast), ada_).body["verdict"], "accepted");
  const json grid_after = ask("GET", class_path(a_.id, "/grid"), a_.instructor).body;
  EXPECT_NE(grid_after, grid_before);
  for (const json& row : grid_after["learners"]) {
    if (row["name"] == "Bob") EXPECT_EQ(row["cells"]["reduction/3"]["status"], "attempted");
    if (row["name"] == "Ada") EXPECT_EQ(row["cells"]["reduction/3"]["best_ratio"], 1.25);
  }
  // Class B's job was never part of it.
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(cyd_job), cyd_).body["verdict"], "accepted");
  // The audit log names who did what.
  std::string actions;
  const Answer audit = ask("GET", class_path(a_.id, "/audit"), assistant_);
  EXPECT_EQ(audit.status, 200) << audit.text;
  for (const json& entry : audit.body["entries"]) actions += entry["action"].get<std::string>() + " ";
  EXPECT_NE(actions.find("rejudging.create"), std::string::npos) << actions;
  EXPECT_NE(actions.find("rejudging.apply"), std::string::npos) << actions;
}

TEST_F(Rejudging, CancellingChangesNothing) {
  const std::string at = store_location();
  const auto job = judged(at, ada_id_, "reduction/3", "accepted", 1.2, "v1");
  const json grid_before = ask("GET", class_path(a_.id, "/grid"), a_.instructor).body;
  const Answer made = ask("POST", class_path(a_.id, "/rejudgings"), admin_, json{{"learner", ada_id_}});
  ASSERT_EQ(made.status, 201) << made.text;
  judge_reruns(at, [](const JobRecord&) { return std::pair<std::string, double>{"wrong_answer", 0}; });
  const std::string one = class_path(a_.id, "/rejudgings/" + made.body["id"].dump());
  EXPECT_EQ(ask("GET", one, a_.instructor).body["summary"]["flipped"], 1);
  EXPECT_EQ(ask("POST", one + "/cancel", ada_, std::string("{}")).status, 403);
  const Answer cancelled = ask("POST", one + "/cancel", a_.instructor, std::string("{}"));
  ASSERT_EQ(cancelled.status, 200) << cancelled.text;
  EXPECT_EQ(cancelled.body["state"], "cancelled");
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(job), ada_).body["verdict"], "accepted");
  EXPECT_EQ(ask("GET", class_path(a_.id, "/grid"), a_.instructor).body["learners"], grid_before["learners"]);
  // Nothing matches a filter of jobs that do not exist: refused, not an empty rejudging.
  EXPECT_EQ(
      ask("POST", class_path(a_.id, "/rejudgings"), a_.instructor, json{{"verdict", "compile_error"}}).status,
      409);
}

TEST_F(Rejudging, VersionsShowWhichJobsWereJudgedUnderAnOlderStage) {
  const std::string at = store_location();
  const Answer versions = ask("GET", class_path(a_.id, "/versions"), assistant_);
  ASSERT_EQ(versions.status, 200) << versions.text;
  std::string current;
  for (const json& stage : versions.body["stages"])
    if (stage["stage"] == "reduction/3") current = stage["current"].get<std::string>();
  ASSERT_EQ(current.size(), 16u);
  const auto now_job = judged(at, ada_id_, "reduction/3", "accepted", 1.2, current);
  judged(at, bob_id_, "reduction/3", "accepted", 1.2, "0123456789abcdef");
  for (const json& stage : ask("GET", class_path(a_.id, "/versions"), a_.instructor).body["stages"]) {
    if (stage["stage"] != "reduction/3") continue;
    EXPECT_EQ(stage["current_jobs"], 1);
    EXPECT_EQ(stage["older_jobs"], 1);
  }
  EXPECT_EQ(ask("GET", class_path(a_.id, "/versions"), ada_).status, 403);
  EXPECT_EQ(ask("GET", class_path(a_.id, "/versions"), b_.instructor).status, 404);
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(now_job), ada_).body["stage_version_current"], true);
  // Rejudging only what an older version judged takes Bob's job alone.
  const Answer older = ask("POST", class_path(a_.id, "/rejudgings"), a_.instructor,
                           json{{"stage", "reduction/3"}, {"older_versions", true}});
  ASSERT_EQ(older.status, 201) << older.text;
  EXPECT_EQ(older.body["jobs"], 1);
  EXPECT_EQ(
      ask("POST", class_path(a_.id, "/rejudgings"), a_.instructor, json{{"older_versions", true}}).status,
      400);
}

TEST_F(Rejudging, EveryRouteRefusesWhoeverMayNotCallIt) {
  judged(store_location(), ada_id_, "reduction/3", "accepted", 1.2, "v1");
  const Answer made =
      ask("POST", class_path(a_.id, "/rejudgings"), a_.instructor, json{{"stage", "reduction/3"}});
  ASSERT_EQ(made.status, 201) << made.text;
  const std::string one = made.body["id"].dump();
  const std::string nobody;
  // Administrators only: anyone else is refused (401 without a token, 403 with another's).
  struct Route {
    std::string method, path;
  };
  const std::vector<Route> admin_routes = {{"GET", "/api/rejudgings"},
                                           {"POST", "/api/rejudgings"},
                                           {"GET", "/api/rejudgings/" + one},
                                           {"POST", "/api/rejudgings/" + one + "/cancel"},
                                           {"POST", "/api/rejudgings/" + one + "/apply"},
                                           {"GET", "/api/course/versions"},
                                           {"POST", "/api/course/reload"}};
  for (const Route& route : admin_routes) {
    EXPECT_EQ(ask(route.method, route.path, nobody, std::string("{}")).status, 401) << route.path;
    for (const std::string* token : {&ada_, &cyd_, &assistant_, &a_.instructor, &b_.instructor})
      EXPECT_EQ(ask(route.method, route.path, *token, std::string("{}")).status, 403) << route.path;
  }
  EXPECT_EQ(ask("GET", "/api/rejudgings/" + one, admin_).status, 200);
  // A class's routes: a learner of this class or another is refused, another class's staff get 404.
  const std::vector<Route> class_routes = {{"GET", class_path(a_.id, "/rejudgings")},
                                           {"GET", class_path(a_.id, "/rejudgings/" + one)},
                                           {"GET", class_path(a_.id, "/versions")},
                                           {"POST", class_path(a_.id, "/rejudgings/" + one + "/cancel")}};
  for (const Route& route : class_routes) {
    EXPECT_EQ(ask(route.method, route.path, nobody, std::string("{}")).status, 401) << route.path;
    EXPECT_EQ(ask(route.method, route.path, ada_, std::string("{}")).status, 403) << route.path;
    EXPECT_EQ(ask(route.method, route.path, cyd_, std::string("{}")).status, 403) << route.path;
    EXPECT_EQ(ask(route.method, route.path, b_.instructor, std::string("{}")).status, 404) << route.path;
  }
  // Class B's staff cannot reach class A's rejudging through their own class either.
  EXPECT_EQ(ask("GET", class_path(b_.id, "/rejudgings/" + one), b_.instructor).status, 404);
  // Bad bodies: a clear 400, nothing made.
  for (const json& bad :
       {json{{"learner", -1}}, json{{"since", "yesterday"}}, json{{"reason", std::string(600, 'x')}},
        json{{"since", 2e9}, {"until", 1e9}}, json::array({1, 2})}) {
    const Answer refused = ask("POST", class_path(a_.id, "/rejudgings"), a_.instructor, bad);
    EXPECT_EQ(refused.status, 400) << bad.dump() << " " << refused.text;
    EXPECT_FALSE(refused.body.value("error", "").empty()) << bad.dump();
  }
  EXPECT_EQ(ask("GET", "/api/rejudgings", admin_).body["rejudgings"].size(), 1u);
}

}  // namespace
}  // namespace cudojo::api_testing

// Running a class day to day: deadlines (jobs after one are judged and marked late), the progress
// grid and its exports (CSV safe to open in a spreadsheet), leaderboards hidden until a deadline,
// and drafts kept on the server, each learner's own.
#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

// A finished job planted with its submission time, as a judge would have recorded it.
std::int64_t finished_at(const std::string& location, std::int64_t learner, const std::string& stage,
                         const std::string& verdict, double submitted_at, double ratio) {
  const std::int64_t id = testing::insert_finished_job(location, learner, stage, verdict, report_with(ratio));
  testing::sql_value(location, "UPDATE jobs SET created_at = " + std::to_string(submitted_at) +
                                   " WHERE id = " + std::to_string(id));
  return id;
}

TEST_F(ClassApi, ADeadlineMarksLaterJobsLateInTheJobTheGridAndTheExport) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const std::string ada = join(a.invite, "Ada", "s1", &a), bob = join(a.invite, "Bob", "s2", &a);
  join(a.invite, "-1 Cy", "s3", &a);
  const auto ada_id = learner_id(ada), bob_id = learner_id(bob);
  const double due = 1'900'000'000;  // 2030-03-17
  ASSERT_EQ(
      ask("PUT", class_path(a.id, "/deadlines/reduction/3"), a.instructor, json{{"due_at", due}}).status,
      200);
  ASSERT_EQ(ask("PUT", class_path(a.id, "/deadlines/reduction/2"), a.instructor,
                json{{"due_at", "2020-01-01T00:00:00+01:00"}})
                .status,
            200);
  // Ada: accepted before the deadline, then again after it. Bob: wrong, then accepted only after it.
  finished_at(store_location(), ada_id, "reduction/3", "accepted", due - 3600, 0.9);
  const auto late_job = finished_at(store_location(), ada_id, "reduction/3", "accepted", due + 60, 0.5);
  finished_at(store_location(), bob_id, "reduction/3", "wrong_answer", due - 60, 0.1);
  finished_at(store_location(), bob_id, "reduction/3", "accepted", due + 120, 1.2);
  // The learner sees it: the job and the history say late, and /api/me the deadlines.
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(late_job), ada).body["late"], true);
  const json history = ask("GET", "/api/history?stage=reduction/3", ada).body["jobs"];
  EXPECT_EQ(history[0]["late"], true);
  EXPECT_EQ(history[1]["late"], false);
  EXPECT_EQ(ask("GET", "/api/me", ada).body["deadlines"]["reduction/3"]["due_at"], due);
  // A job submitted now to a stage whose deadline passed is judged, and late.
  const Answer after = ask("POST", "/api/jobs", ada, json{{"stage", "reduction/2"}, {"source", "x"}});
  ASSERT_EQ(after.status, 202);
  EXPECT_EQ(ask("GET", "/api/jobs/" + after.body["id"].dump(), ada).body["late"], true);

  const Answer grid = ask("GET", class_path(a.id, "/grid"), a.instructor);
  ASSERT_EQ(grid.status, 200) << grid.text;
  EXPECT_NE(grid.header("Server-Timing").find("grid;dur="), std::string::npos);
  const json& rows = grid.body["learners"];
  ASSERT_EQ(rows.size(), 3u);  // by student id
  EXPECT_EQ(rows[0]["name"], "Ada");
  const json& ada_cell = rows[0]["cells"]["reduction/3"];
  EXPECT_EQ(ada_cell["status"], "accepted");
  EXPECT_EQ(ada_cell["timing"], "on_time");
  EXPECT_EQ(ada_cell["attempts"], 2);
  EXPECT_EQ(ada_cell["best_ratio"], 0.5);
  EXPECT_EQ(ada_cell["first_accepted_at"], due - 3600);
  EXPECT_EQ(ada_cell["late_jobs"], 1);
  EXPECT_EQ(rows[1]["cells"]["reduction/3"]["timing"], "late");
  EXPECT_EQ(rows[1]["cells"]["reduction/2"]["timing"], "missing");  // due in 2020, never accepted
  EXPECT_FALSE(rows[2]["cells"].contains("reduction/3"));           // never tried, not yet due: left out
  EXPECT_EQ(rows[2]["cells"]["reduction/2"]["status"], "new");      // never tried and due: kept, missing
  EXPECT_EQ(rows[2]["cells"]["reduction/2"]["timing"], "missing");
  EXPECT_EQ(rows[0]["accepted"], 1);
  EXPECT_EQ(rows[1]["on_time"], 0);

  // The export: one row per learner, student id first, on time or late for each stage.
  const Answer csv = ask("GET", class_path(a.id, "/export"), a.instructor);
  ASSERT_EQ(csv.status, 200);
  EXPECT_EQ(csv.header("Content-Type").rfind("text/csv", 0), 0u);
  EXPECT_NE(csv.header("Content-Disposition").find(".csv"), std::string::npos);
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; (end = csv.text.find("\r\n", at)) != std::string::npos; at = end + 2)
    lines.push_back(csv.text.substr(at, end - at));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("student_id,name,email,signed_in,accepted,on_time,reduction/1 status,", 0), 0u);
  EXPECT_NE(lines[0].find("reduction/3 timing"), std::string::npos);
  EXPECT_NE(lines[1].find("accepted,on_time,2,1,0.500,"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("accepted,late,2,1,1.200,"), std::string::npos) << lines[2];
  // A name a spreadsheet would take for a formula is written as text.
  EXPECT_EQ(lines[3].rfind("s3,'-1 Cy,", 0), 0u) << lines[3];
  const Answer as_json = ask("GET", class_path(a.id, "/export?format=json"), a.instructor);
  EXPECT_EQ(as_json.body["learners"].size(), 3u);
  EXPECT_EQ(ask("GET", class_path(a.id, "/export?format=xlsx"), a.instructor).status, 400);
  // Deadlines refused: no zone, not a time, unknown keys, a stage the course lacks; cleared.
  for (const json& bad : {json{{"due_at", "2030-01-01 12:00"}}, json{{"due_at", "soon"}},
                          json{{"due_at", -5}}, json{{"due_at", due}, {"hide", true}}, json::object()})
    EXPECT_EQ(ask("PUT", class_path(a.id, "/deadlines/reduction/3"), a.instructor, bad).status, 400) << bad;
  EXPECT_EQ(
      ask("PUT", class_path(a.id, "/deadlines/reduction/99"), a.instructor, json{{"due_at", due}}).status,
      404);
  EXPECT_EQ(ask("DELETE", class_path(a.id, "/deadlines/reduction/2"), a.instructor).body["cleared"], true);
  EXPECT_EQ(ask("GET", "/api/jobs/" + after.body["id"].dump(), ada).body["late"], false);
}

TEST_F(ClassApi, ALeaderboardCanStayHiddenFromLearnersUntilItsDeadline) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const MadeClass a = make_class(admin, "Class A", "Ia");
  const std::string ada = join(a.invite, "Ada");
  ASSERT_EQ(ask("PUT", "/api/me", ada, json{{"leaderboard", true}}).status, 200);
  finished_at(store_location(), learner_id(ada), "reduction/3", "accepted", 1'800'000'000, 0.8);
  const std::string board = "/api/stages/reduction/3/leaderboard";
  EXPECT_EQ(ask("GET", board, ada).body["entries"].size(), 1u);
  // The caller's own row is marked for them alone; a report without a GPU names none.
  EXPECT_EQ(ask("GET", board, ada).body["entries"][0]["mine"], true);
  EXPECT_EQ(ask("GET", board, join(a.invite, "Bo")).body["entries"][0]["mine"], false);
  EXPECT_TRUE(ask("GET", board, ada).body["entries"][0]["gpu"].is_null());
  ASSERT_EQ(ask("PUT", class_path(a.id, "/deadlines/reduction/3"), a.instructor,
                json{{"due_at", "2099-01-01T00:00:00Z"}, {"hide_leaderboard", true}})
                .status,
            200);
  const Answer hidden = ask("GET", board, ada);
  EXPECT_TRUE(hidden.body["entries"].empty());
  EXPECT_EQ(hidden.body["hidden_until"], 4070908800.0);
  // The class's staff see it; once the deadline has passed, everyone does.
  EXPECT_EQ(ask("GET", board + "?class=" + std::to_string(a.id), a.instructor).body["entries"].size(), 1u);
  ASSERT_EQ(ask("PUT", class_path(a.id, "/deadlines/reduction/3"), a.instructor,
                json{{"due_at", "2021-01-01T00:00:00Z"}, {"hide_leaderboard", true}})
                .status,
            200);
  EXPECT_EQ(ask("GET", board, ada).body["entries"].size(), 1u);
  // The default class's board, which anyone sees, does not list another class's learners.
  EXPECT_TRUE(ask("GET", board).body["entries"].empty());
}

TEST_F(ClassApi, DraftsAreKeptOnTheServerForTheirLearnerOnly) {
  start({"--workers", "0", "--limit", "max_draft_saves_per_minute=5"});
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  const std::string path = "/api/drafts/reduction/block-tree/python";
  const Answer saved = ask("PUT", path, ada, json{{"source", "def k(): pass\n"}});
  ASSERT_EQ(saved.status, 200) << saved.text;
  EXPECT_EQ(saved.body["stage"], "reduction/3");  // the alias names the stage
  ASSERT_EQ(ask("PUT", "/api/drafts/reduction/3/cuda", ada, json{{"source", "// cuda\n"}}).status, 200);
  const json mine = ask("GET", "/api/drafts?stage=reduction/3", ada).body["drafts"];
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0]["language"], "cuda");
  EXPECT_EQ(mine[1]["source"], "def k(): pass\n");
  EXPECT_TRUE(ask("GET", "/api/drafts", bob).body["drafts"].empty());  // another learner sees none
  // Bounds: the source limit, a NUL, a stage or language that is not there, the body's shape.
  EXPECT_EQ(ask("PUT", path, ada, json{{"source", std::string(64 * 1024 + 1, 'x')}}).status, 413);
  EXPECT_EQ(ask("PUT", path, ada, json{{"source", std::string("a\0b", 3)}}).status, 400);
  EXPECT_EQ(ask("PUT", "/api/drafts/reduction/99/cuda", ada, json{{"source", "x"}}).status, 404);
  EXPECT_EQ(ask("PUT", "/api/drafts/reduction/3/fortran", ada, json{{"source", "x"}}).status, 404);
  EXPECT_EQ(ask("PUT", path, ada, json{{"text", "x"}}).status, 400);
  EXPECT_EQ(ask("GET", "/api/drafts?stage=nope", ada).status, 400);
  // Deleted, by its learner only.
  EXPECT_EQ(ask("DELETE", path, bob).body["deleted"], false);
  EXPECT_EQ(ask("DELETE", path, ada).body["deleted"], true);
  EXPECT_EQ(ask("GET", "/api/drafts", ada).body["drafts"].size(), 1u);
  // Saves are bounded per learner and minute (5 here; two saves and a delete above, refused requests
  // not counted): then 429, and another learner is not held up.
  EXPECT_EQ(ask("PUT", path, ada, json{{"source", "fourth"}}).status, 200);
  EXPECT_EQ(ask("PUT", path, ada, json{{"source", "fifth"}}).status, 200);
  const Answer over = ask("PUT", path, ada, json{{"source", "sixth"}});
  EXPECT_EQ(over.status, 429);
  EXPECT_EQ(over.header("Retry-After"), "60");
  EXPECT_EQ(ask("GET", "/api/drafts?stage=reduction/3", ada).body["drafts"][1]["source"], "fifth");
  EXPECT_EQ(ask("PUT", path, bob, json{{"source", "bob's"}}).status, 200);
}

}  // namespace
}  // namespace cudojo::api_testing

// A learner's own work: submitting and reading jobs, the queue's limits, history, progress and
// the account.
#include "api_test_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(Api, CompileErrorRoundTrip) {
  start();
  const std::string token = sign_in("ada");
  auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  ASSERT_EQ(response->status, 202) << response->body;
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  json job = wait_done(token, id);
  EXPECT_EQ(job["verdict"], "compile_error");
  EXPECT_EQ(job["report"]["verdict"], "compile_error");  // the same JSON as `cudojo check --json`
  EXPECT_EQ(job["report"]["compile"]["diagnostics"][0]["line"], 6);
  EXPECT_GT(job["queued_to_verdict_ms"].get<double>(), 0.0);
  EXPECT_EQ(job["source"], compile_error_source());  // the page opens and compares old submissions
  EXPECT_EQ(job["language"], "cuda");
  // The progress stream ends with the result.
  auto events = client().Get(("/api/jobs/" + std::to_string(id) + "/events").c_str(),
                             {{"Authorization", "Bearer " + token}});
  ASSERT_EQ(events->status, 200);
  EXPECT_NE(events->body.find("event: result"), std::string::npos);
  // History holds it, as a summary: no report, no source.
  auto history = client().Get("/api/history?stage=reduction/3", {{"Authorization", "Bearer " + token}});
  ASSERT_EQ(history->status, 200);
  const json listed = json::parse(history->body);
  EXPECT_EQ(listed["jobs"][0]["id"], id);
  EXPECT_EQ(listed["jobs"][0]["verdict"], "compile_error");
  EXPECT_FALSE(listed["jobs"][0].contains("report"));
  EXPECT_FALSE(listed["jobs"][0].contains("source"));
  EXPECT_EQ(listed["next_before"], nullptr);
}

TEST_F(Api, PythonAndRustJobsAreJudgedInTheirLanguage) {
  if (find_bubblewrap().empty()) GTEST_SKIP() << "bubblewrap is not installed (scripts/setup.sh installs it)";
  start();
  const std::string token = sign_in("ada");
  // A Python syntax error and a Rust typo: judged here without a GPU, at the learner's lines.
  const std::pair<std::string, int> cases[] = {{"python", 3}, {"rust", 2}};
  for (const auto& [language, line] : cases) {
    const std::string source = language == "python"
                                   ? "from numba import cuda\n@cuda.jit\ndef reduce(X, out, N)\n"
                                   : "#[kernel]\nfn reduce(x: *const f32, out: *mut f32, n: i32) { y }\n";
    auto response = submit(token, {{"stage", "reduction/3"}, {"source", source}, {"language", language}});
    ASSERT_EQ(response->status, 202) << response->body;
    const auto id = json::parse(response->body)["id"].get<std::int64_t>();
    json job = wait_done(token, id);
    EXPECT_EQ(job["language"], language);
    EXPECT_EQ(job["verdict"], "compile_error") << job.dump();
    EXPECT_EQ(job["report"]["language"], language);
    ASSERT_FALSE(job["report"]["compile"]["diagnostics"].empty()) << job.dump();
    EXPECT_EQ(job["report"]["compile"]["diagnostics"][0]["line"], line) << job.dump();
  }
  auto history = client().Get("/api/history?stage=reduction/3", {{"Authorization", "Bearer " + token}});
  const json jobs = json::parse(history->body)["jobs"];
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["language"], "rust");
  EXPECT_EQ(jobs[1]["language"], "python");
  // The stage offers each language's starter and signature.
  const json stage = json::parse(client().Get("/api/stages/reduction/3")->body);
  EXPECT_NE(stage["languages"]["rust"]["signature"].get<std::string>().find("fn reduce"), std::string::npos);
}

TEST_F(Api, BadRequestsGetAClearError) {
  start();
  const std::string token = sign_in("ada");
  auto unknown = submit(token, {{"stage", "reduction/99"}, {"source", "x"}});
  EXPECT_EQ(unknown->status, 400);
  EXPECT_NE(json::parse(unknown->body)["error"].get<std::string>().find("reduction/99"), std::string::npos);
  auto bad_json =
      client().Post("/api/jobs", {{"Authorization", "Bearer " + token}}, "{not json", "application/json");
  EXPECT_EQ(bad_json->status, 400);
  EXPECT_EQ(submit(token, {{"stage", "reduction/3"}})->status, 400);
  auto fortran = submit(token, {{"stage", "reduction/3"}, {"source", "x"}, {"language", "fortran"}});
  EXPECT_EQ(fortran->status, 400);
  EXPECT_NE(json::parse(fortran->body)["error"].get<std::string>().find("cuda, python, rust"),
            std::string::npos);
  EXPECT_EQ(submit("not-a-token", {{"stage", "reduction/3"}, {"source", "x"}})->status, 401);
  auto two_spaces = client().Post("/api/learners", "{\"name\": \"a  b\"}", "application/json");
  EXPECT_EQ(two_spaces->status, 400);
  EXPECT_NE(json::parse(two_spaces->body)["error"].get<std::string>().find("single spaces"),
            std::string::npos);
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"ada\"}", "application/json")->status, 409);
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \" ada \"}", "application/json")->status, 409);
}

TEST_F(Api, OversizeSourceAndOversizeRequestAreRefused) {
  start();
  const std::string token = sign_in("ada");
  auto big_source = submit(token, {{"stage", "reduction/3"}, {"source", std::string(70 * 1024, 'x')}});
  EXPECT_EQ(big_source->status, 413);
  EXPECT_NE(json::parse(big_source->body)["error"].get<std::string>().find("limit"), std::string::npos);
  // The source's own size and the limit, once each (issue #27: not the limit plus one).
  EXPECT_EQ(json::parse(big_source->body)["error"], "the source is 71680 bytes; the limit is 65536 bytes");
  auto huge = submit(token, {{"stage", "reduction/3"}, {"source", std::string(300 * 1024, 'x')}});
  EXPECT_EQ(huge->status, 413);
  const json refused = json::parse(huge->body, nullptr, false);
  ASSERT_TRUE(refused.is_object()) << huge->body;
  EXPECT_TRUE(refused["error"].is_string());
}

TEST_F(Api, FullQueueAnswers429WithRetryAfter) {
  start({"--workers", "0", "--max-queue", "3"});
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(submit(i < 2 ? ada : bob, {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
  }
  auto refused = submit(bob, {{"stage", "reduction/2"}, {"source", "x"}});
  EXPECT_EQ(refused->status, 429);
  EXPECT_FALSE(refused->get_header_value("Retry-After").empty());
}

TEST_F(Api, OneLearnerCannotFillTheQueue) {
  start({"--workers", "0"});
  const std::string ada = sign_in("ada");
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
  EXPECT_EQ(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->status, 429);
  EXPECT_EQ(submit(sign_in("bob"), {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
}

TEST_F(Api, ConcurrentSubmissionsAllComplete) {
  start({"--workers", "2"});
  std::vector<std::string> tokens;
  for (int learner = 0; learner < 4; ++learner)
    tokens.push_back(sign_in("learner" + std::to_string(learner)));
  std::mutex mutex;
  std::vector<std::pair<std::string, std::int64_t>> jobs;
  std::vector<std::thread> threads;
  for (const auto& token : tokens) {
    threads.emplace_back([&, token] {
      for (int i = 0; i < 4; ++i) {
        auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
        ASSERT_TRUE(response);
        ASSERT_EQ(response->status, 202);
        std::lock_guard lock(mutex);
        jobs.emplace_back(token, json::parse(response->body)["id"].get<std::int64_t>());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(jobs.size(), 16u);
  std::set<std::int64_t> distinct;
  for (const auto& [token, id] : jobs) {
    distinct.insert(id);
    EXPECT_EQ(wait_done(token, id)["verdict"], "compile_error");
  }
  EXPECT_EQ(distinct.size(), 16u);
}

// A client that lost the answer sends the same submission with the same Idempotency-Key again and
// gets the job it queued, never a second one.
TEST_F(Api, ASubmissionSentTwiceWithItsKeyIsQueuedOnce) {
  start({"--workers", "0"});
  const std::string token = sign_in("ada");
  const json body = {{"stage", "reduction/3"}, {"source", compile_error_source()}};
  auto post = [&](const std::string& key, const json& payload) {
    return client().Post("/api/jobs", {{"Authorization", "Bearer " + token}, {"Idempotency-Key", key}},
                         payload.dump(), "application/json");
  };
  auto first = post("3f1c9a52-run-1", body);
  ASSERT_EQ(first->status, 202) << first->body;
  auto again = post("3f1c9a52-run-1", body);
  ASSERT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(json::parse(again->body)["id"], json::parse(first->body)["id"]);
  EXPECT_EQ(json::parse(again->body)["replayed"], true);
  EXPECT_EQ(again->get_header_value("Location"), first->get_header_value("Location"));
  json changed = body;
  changed["source"] = "__global__ void other() {}";
  auto reused = post("3f1c9a52-run-1", changed);
  EXPECT_EQ(reused->status, 422) << reused->body;
  EXPECT_EQ(post("has space", body)->status, 400);
  // A NUL in the source is refused on either store, never stored cut short.
  json with_nul = body;
  with_nul["source"] = std::string("__global__ void k() {}\0 hidden", 30);
  auto nul = post("another-key", with_nul);
  EXPECT_EQ(nul->status, 400) << nul->body;
  EXPECT_EQ(post(std::string(101, 'k'), body)->status, 400);
  auto history = client().Get("/api/history", {{"Authorization", "Bearer " + token}});
  EXPECT_EQ(json::parse(history->body)["jobs"].size(), 1u);
}

TEST_F(Api, AJobIsVisibleOnlyToItsLearner) {
  start();
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  auto response = submit(ada, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  const std::string path =
      "/api/jobs/" + std::to_string(json::parse(response->body)["id"].get<std::int64_t>());
  EXPECT_EQ(client().Get(path.c_str(), {{"Authorization", "Bearer " + bob}})->status, 404);
  EXPECT_EQ(client().Get(path.c_str())->status, 401);
  EXPECT_EQ(client().Get("/api/jobs/abc", {{"Authorization", "Bearer " + ada}})->status, 404);
}

// The signed-in learner: GET /api/me says who a token is (401 for a stale one), PUT /api/me opts in
// to or out of the leaderboards.
TEST_F(Api, MeNamesTheTokensLearnerAndTakesTheLeaderboardChoice) {
  start();
  auto created = client().Post("/api/learners", R"({"name": "  Ada Lovelace "})", "application/json");
  ASSERT_EQ(created->status, 201) << created->body;
  const json issued = json::parse(created->body);
  EXPECT_EQ(issued["name"], "Ada Lovelace");
  const httplib::Headers auth = {{"Authorization", "Bearer " + issued["token"].get<std::string>()}};
  auto me = client().Get("/api/me", auth);
  ASSERT_EQ(me->status, 200);
  EXPECT_EQ(json::parse(me->body), json({{"id", issued["id"]},
                                         {"name", "Ada Lovelace"},
                                         {"leaderboard", false},
                                         {"kind", "learner"},
                                         {"class", issued["class"]},
                                         {"deadlines", json::object()}}));
  EXPECT_EQ(issued["class"]["name"], "Open sign-up");
  auto stale = client().Get("/api/me", {{"Authorization", "Bearer 0123"}});
  EXPECT_EQ(stale->status, 401);
  EXPECT_TRUE(json::parse(stale->body)["error"].is_string());
  EXPECT_EQ(client().Get("/api/me")->status, 401);

  auto opted_in = client().Put("/api/me", auth, R"({"leaderboard": true})", "application/json");
  ASSERT_EQ(opted_in->status, 200) << opted_in->body;
  EXPECT_EQ(json::parse(opted_in->body)["leaderboard"], true);
  EXPECT_EQ(json::parse(opted_in->body)["name"], "Ada Lovelace");
  EXPECT_EQ(json::parse(client().Get("/api/me", auth)->body)["leaderboard"], true);
  EXPECT_EQ(client().Put("/api/me", auth, R"({"leaderboard": "yes"})", "application/json")->status, 400);
  EXPECT_EQ(client().Put("/api/me", auth, "[]", "application/json")->status, 400);
  EXPECT_EQ(client().Put("/api/me", R"({"leaderboard": false})", "application/json")->status, 401);
  auto opted_out = client().Put("/api/me", auth, R"({"leaderboard": false})", "application/json");
  EXPECT_EQ(json::parse(opted_out->body)["leaderboard"], false);
}

TEST_F(Api, HistoryPagesNewestFirstWithSummariesOnly) {
  start({"--workers", "0"});
  const std::string token = sign_in("ada");
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  const auto ada = learner_id(token);
  ASSERT_GT(ada, 0);
  const std::string database = store_location();
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 24; ++i) {
    ids.push_back(testing::insert_finished_job(database, ada, i % 2 ? "reduction/3" : "reduction/2",
                                               "accepted", report_with(1.0 + i, 0.5)));
    ASSERT_GT(ids.back(), 0);
  }
  // Another learner's jobs never show.
  ASSERT_GT(testing::insert_finished_job(database, learner_id(sign_in("bob")), "reduction/3", "accepted",
                                         report_with(1.0)),
            0);

  auto first = client().Get("/api/history", auth);
  ASSERT_EQ(first->status, 200);
  const json page = json::parse(first->body);
  ASSERT_EQ(page["jobs"].size(), 20u);  // the default page
  EXPECT_EQ(page["jobs"][0]["id"], ids[23]);
  EXPECT_EQ(page["next_before"], page["jobs"][19]["id"]);
  std::set<std::string> keys;
  for (const auto& [key, value] : page["jobs"][0].items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"id", "stage", "language", "state", "verdict", "time_ratio",
                                         "baseline_ratio", "created_at", "finished_at", "late"}));
  EXPECT_EQ(page["jobs"][0]["time_ratio"], 24.0);
  EXPECT_EQ(page["jobs"][0]["baseline_ratio"], 0.5);
  EXPECT_EQ(page["jobs"][0]["state"], "done");
  EXPECT_LT(first->body.size(), 20u * 400);  // summaries, not 4 KB reports

  // Following the cursor walks the rest, then ends.
  const std::string next =
      "/api/history?limit=3&before=" + std::to_string(page["next_before"].get<std::int64_t>());
  const json second = json::parse(client().Get(next.c_str(), auth)->body);
  ASSERT_EQ(second["jobs"].size(), 3u);
  EXPECT_EQ(second["jobs"][0]["id"], ids[3]);
  EXPECT_EQ(second["next_before"], ids[1]);
  const std::string last = "/api/history?limit=3&before=" + std::to_string(ids[1]);
  const json third = json::parse(client().Get(last.c_str(), auth)->body);
  ASSERT_EQ(third["jobs"].size(), 1u);
  EXPECT_EQ(third["jobs"][0]["id"], ids[0]);
  EXPECT_EQ(third["next_before"], nullptr);

  // The stage filter takes aliases; the cursor works with it.
  const json staged =
      json::parse(client().Get("/api/history?stage=reduction/block-tree&limit=2", auth)->body);
  ASSERT_EQ(staged["jobs"].size(), 2u);
  EXPECT_EQ(staged["jobs"][1]["id"], ids[21]);
  EXPECT_EQ(staged["next_before"], ids[21]);
  EXPECT_EQ(json::parse(client().Get("/api/history?limit=1000", auth)->body)["jobs"].size(),
            24u);  // capped at 100
  for (const char* bad : {"/api/history?limit=0", "/api/history?limit=x", "/api/history?before=-3",
                          "/api/history?stage=reduction/99"}) {
    auto refused = client().Get(bad, auth);
    EXPECT_EQ(refused->status, 400) << bad;
    EXPECT_TRUE(json::parse(refused->body)["error"].is_string()) << bad;
  }
  EXPECT_EQ(client().Get("/api/history")->status, 401);
}

TEST_F(Api, ProgressIsAttemptedAfterACompileErrorAndAcceptedAfterAnAcceptedJob) {
  start();
  const std::string token = sign_in("ada");
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  EXPECT_EQ(json::parse(client().Get("/api/progress", auth)->body),
            json({{"stages", json::object()}, {"deadlines", json::object()}}));
  auto response = submit(token, {{"stage", "reduction/block-tree"}, {"source", compile_error_source()}});
  ASSERT_EQ(response->status, 202) << response->body;
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  wait_done(token, id);
  auto progress = client().Get("/api/progress", auth);
  ASSERT_EQ(progress->status, 200);
  json stages = json::parse(progress->body)["stages"];
  ASSERT_EQ(stages.size(), 1u) << stages;
  EXPECT_EQ(stages["reduction/3"], json({{"status", "attempted"},
                                         {"attempts", 1},
                                         {"best_time_ratio", nullptr},
                                         {"best_time_ms", nullptr},
                                         {"last_job", id}}));

  // An accepted job (written as a GPU judge would have) makes the stage accepted, with its numbers.
  const auto accepted = testing::insert_finished_job(store_location(), learner_id(token), "reduction/3",
                                                     "accepted", report_with(1.25, std::nullopt, 0.04));
  ASSERT_GT(accepted, 0);
  stages = json::parse(client().Get("/api/progress", auth)->body)["stages"];
  EXPECT_EQ(stages["reduction/3"]["status"], "accepted");
  EXPECT_EQ(stages["reduction/3"]["attempts"], 2);
  EXPECT_EQ(stages["reduction/3"]["best_time_ratio"], 1.25);
  EXPECT_EQ(stages["reduction/3"]["best_time_ms"], 0.04);
  EXPECT_EQ(stages["reduction/3"]["last_job"], accepted);
  EXPECT_EQ(client().Get("/api/progress")->status, 401);
  EXPECT_EQ(client().Get("/api/progress", {{"Authorization", "Bearer nope"}})->status, 401);
}

}  // namespace
}  // namespace cudojo::api_testing

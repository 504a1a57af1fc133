// The course and the page as anyone sees them: stages, lessons, leaderboards, health, the
// page's files, and the methods each path answers.
#include "api_test_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(Api, StagesAreListedAndDetailed) {
  start();
  auto list = client().Get("/api/stages");
  ASSERT_EQ(list->status, 200);
  const json listed = json::parse(list->body);
  ASSERT_EQ(listed.size(), 12u);
  EXPECT_EQ(listed[0]["id"], "reduction/1");  // course.toml: reduction first, then atomics
  EXPECT_EQ(listed[9]["id"], "atomics/1");
  auto detail = client().Get("/api/stages/reduction/block-tree");
  ASSERT_EQ(detail->status, 200);
  json stage = json::parse(detail->body);
  EXPECT_EQ(stage["id"], "reduction/3");
  EXPECT_NE(stage["lesson_html"].get<std::string>().find("<h1>"), std::string::npos);
  EXPECT_NE(stage["starter"].get<std::string>().find("atomicAdd"), std::string::npos);
  EXPECT_EQ(client().Get("/api/stages/reduction/99")->status, 404);
}

// `cudojo show --json` and GET /api/stages/{id} are built by one function: every key the CLI
// prints, the server sends with the same value, and the server adds only the rendered lesson.
TEST_F(Api, TheCliAndTheServerDescribeEveryStageAlike) {
  start();
  const json listed = json::parse(client().Get("/api/stages")->body);
  auto cli_list = testing::run_cli("stages --json");
  ASSERT_EQ(cli_list.exit_code, 0) << cli_list.out;
  const json cli_listed = json::parse(cli_list.out);
  ASSERT_EQ(listed.size(), cli_listed.size());
  ASSERT_FALSE(listed.empty());
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const std::string id = listed[i]["id"];
    // The list: each key of the server's entry, with the same value, in the CLI's entry.
    for (const auto& [key, value] : listed[i].items()) {
      ASSERT_TRUE(cli_listed[i].contains(key)) << id << " " << key;
      EXPECT_EQ(cli_listed[i].at(key), value) << id << " " << key;
    }

    auto shown = testing::run_cli("show " + id + " --json");
    ASSERT_EQ(shown.exit_code, 0) << shown.out;
    const json cli = json::parse(shown.out);
    auto answer = client().Get(("/api/stages/" + id).c_str());
    ASSERT_EQ(answer->status, 200);
    json server = json::parse(answer->body);
    EXPECT_NE(server["lesson_html"].get<std::string>().find("<h1>"), std::string::npos) << id;
    server.erase("lesson_html");
    // Only the server knows which GPU judges here: its lesson's note under the title says so, and
    // lesson_figures names whose figures fill it (no GPU here: the H200's, as an example). The rest
    // of the lesson is the CLI's, figure for figure.
    if (server.contains("lesson_figures")) {
      EXPECT_EQ(server["lesson_figures"]["example"], true) << id;
      server.erase("lesson_figures");
      const auto without_note = [](std::string lesson) {
        const std::size_t note = lesson.find("> *Figures in this lesson");
        if (note != std::string::npos) lesson.erase(note, lesson.find('\n', note) + 1 - note);
        return lesson;
      };
      const std::string cli_lesson = cli["lesson_markdown"], server_lesson = server["lesson_markdown"];
      EXPECT_NE(server_lesson.find("no GPU judges on this server yet"), std::string::npos) << id;
      EXPECT_EQ(without_note(server_lesson), without_note(cli_lesson)) << id;
      server["lesson_markdown"] = cli["lesson_markdown"];
    }
    std::set<std::string> cli_keys, server_keys;
    for (const auto& [key, value] : cli.items()) cli_keys.insert(key);
    for (const auto& [key, value] : server.items()) server_keys.insert(key);
    EXPECT_EQ(cli_keys, server_keys) << id;
    for (const auto& [key, value] : cli.items()) EXPECT_EQ(server[key], value) << id << " " << key;
    EXPECT_FALSE(cli["lesson_markdown"].get<std::string>().empty()) << id;
  }
}

TEST_F(Api, ThePageIsServed) {
  start();
  auto page = client().Get("/index.html");
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("cudojo"), std::string::npos);
  EXPECT_EQ(client().Get("/js/main.js")->status, 200);
}

// Only what the page uses is served: its own files, its diagrams, and the /vendor/ files its
// index.html names, with what those stylesheets load; nothing else of the npm folders.
TEST_F(Api, ThePagesOtherFilesAndTheVendorFilesItNamesAreServed) {
  // A web folder of its own, so the test does not depend on what web/ holds today.
  const fs::path web = data_ / "web";
  fs::create_directories(web / "diagrams");
  fs::create_directories(web / "node_modules" / "katex" / "dist" / "fonts");
  fs::create_directories(web / "node_modules" / "diff" / "dist");
  std::ofstream(web / "index.html") << "<!doctype html><title>cudojo</title>"
                                       "<link rel=\"stylesheet\" href=\"/vendor/katex/katex.min.css\">"
                                       "<script src=\"/vendor/diff/diff.min.js\"></script>";
  std::ofstream(web / "favicon.svg") << "<svg xmlns='http://www.w3.org/2000/svg'/>";
  std::ofstream(web / "lesson.js") << "export const lesson = 1;";
  std::ofstream(web / "lesson.css") << ".lesson {}";
  std::ofstream(web / "diagrams" / "tree-1.svg") << "<svg id='tree'/>";
  const std::string katex_css = "@font-face{src:url(fonts/KaTeX_Main-Regular.woff2)} .katex {}";
  std::ofstream(web / "node_modules" / "katex" / "dist" / "katex.min.css") << katex_css;
  std::ofstream(web / "node_modules" / "katex" / "dist" / "fonts" / "KaTeX_Main-Regular.woff2") << "font";
  std::ofstream(web / "node_modules" / "katex" / "dist" / "katex.js") << "// not named by the page";
  std::ofstream(web / "node_modules" / "katex" / "README.md") << "# a package's own file";
  std::ofstream(web / "node_modules" / "diff" / "dist" / "diff.min.js") << "var Diff;";
  std::ofstream(web / "node_modules" / "diff" / "dist" / "demo.html") << "<script>alert(1)</script>";
  start({"--workers", "1", "--web-dir", web.string()});
  for (const char* path : {"/favicon.ico", "/favicon.svg"}) {
    auto icon = client().Get(path);
    ASSERT_EQ(icon->status, 200) << path;
    EXPECT_EQ(icon->get_header_value("Content-Type"), "image/svg+xml") << path;
    EXPECT_NE(icon->body.find("<svg"), std::string::npos) << path;
  }
  auto lesson = client().Get("/lesson.js");
  ASSERT_EQ(lesson->status, 200);
  EXPECT_EQ(lesson->get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(client().Get("/lesson.css")->get_header_value("Content-Type"), "text/css; charset=utf-8");
  auto diagram = client().Get("/diagrams/tree-1.svg");
  ASSERT_EQ(diagram->status, 200);
  EXPECT_EQ(diagram->body, "<svg id='tree'/>");
  EXPECT_EQ(diagram->get_header_value("Content-Type"), "image/svg+xml");
  // Missing files, files the page does not use, and names that could leave the folder are JSON
  // 404s, and the server goes on.
  for (const char* missing :
       {"/diagrams/none.svg", "/diagrams/../favicon.svg", "/diagrams/.hidden.svg", "/diagrams/x.txt",
        "/app.js", "/vendor/highlight/highlight.min.js", "/vendor/katex/katex.js",
        "/vendor/katex/../README.md", "/vendor/diff/demo.html", "/vendor/katex/"}) {
    auto response = client().Get(missing);
    EXPECT_EQ(response->status, 404) << missing;
    EXPECT_TRUE(json::parse(response->body, nullptr, false).is_object()) << missing << ": " << response->body;
  }
  EXPECT_NE(client().Get("/vendor/katex/katex.min.css%00.html")->status, 200);
  EXPECT_EQ(client().Get("/api/health")->status, 200);
  // What the page names is served; the page's policy lets the fonts load.
  auto katex = client().Get("/vendor/katex/katex.min.css");
  ASSERT_EQ(katex->status, 200);
  EXPECT_EQ(katex->body, katex_css);
  EXPECT_EQ(katex->get_header_value("Content-Type"), "text/css; charset=utf-8");
  auto font = client().Get("/vendor/katex/fonts/KaTeX_Main-Regular.woff2");
  EXPECT_EQ(font->status, 200);
  EXPECT_EQ(font->get_header_value("Content-Type"), "font/woff2");
  EXPECT_EQ(client().Get("/vendor/diff/diff.min.js")->status, 200);
  const std::string policy = katex->get_header_value("Content-Security-Policy");
  EXPECT_NE(policy.find("font-src 'self'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("style-src 'self' 'unsafe-inline'"), std::string::npos) << policy;
  // A file's path answers GET only (405 naming it, as every known path does).
  auto put = client().Put("/vendor/katex/katex.min.css", "x", "text/css");
  EXPECT_EQ(put->status, 405);
  EXPECT_EQ(put->get_header_value("Allow"), "GET");
  // Revalidation and ranges: the ETag gives 304; one range is part of the file, several the whole
  // file once, a range past the end 416. (Through nginx, Range never reaches cudojo: 200.)
  auto unchanged =
      client().Get("/vendor/diff/diff.min.js", {{"If-None-Match", font->get_header_value("ETag")}});
  EXPECT_EQ(unchanged->status, 200);  // another file's ETag
  auto same = client().Get("/vendor/katex/fonts/KaTeX_Main-Regular.woff2",
                           {{"If-None-Match", font->get_header_value("ETag")}});
  EXPECT_EQ(same->status, 304);
  std::string many = "bytes=0-";
  for (int i = 0; i < 2700; ++i) many += ",0-";
  auto ranges = client().Get("/vendor/katex/katex.min.css", {{"Range", many}});
  EXPECT_EQ(ranges->status, 200);
  EXPECT_EQ(ranges->body, katex_css);
  auto part = client().Get("/vendor/katex/katex.min.css", {{"Range", "bytes=0-9"}});
  EXPECT_EQ(part->status, via_nginx() ? 200 : 206);
  EXPECT_EQ(part->body, via_nginx() ? katex_css : katex_css.substr(0, 10));
  EXPECT_EQ(client().Get("/vendor/katex/katex.min.css", {{"Range", "bytes=100000-"}})->status,
            via_nginx() ? 200 : 416);
}

TEST_F(Api, TheLeaderboardRanksOptedInLearnersByTheGatesRatio) {
  start({"--workers", "0"});
  const std::string ada = sign_in("ada"), bob = sign_in("bob b"), cyd = sign_in("cyd");
  const std::string database = store_location();
  for (const auto& token : {ada, bob}) {
    ASSERT_EQ(client()
                  .Put("/api/me", {{"Authorization", "Bearer " + token}}, R"({"leaderboard": true})",
                       "application/json")
                  ->status,
              200);
  }
  const auto ada_id = learner_id(ada), bob_id = learner_id(bob), cyd_id = learner_id(cyd);
  // ada's gate ratio is the baseline's (0.9), bob's the reference's (0.8, his better of two);
  // cyd is fastest but has not opted in; a wrong answer never ranks.
  ASSERT_GT(testing::insert_finished_job(database, ada_id, "reduction/3", "accepted",
                                         report_with(0.3, 0.9, 0.02), "rust"),
            0);
  ASSERT_GT(testing::insert_finished_job(database, bob_id, "reduction/3", "accepted", report_with(1.1)), 0);
  ASSERT_GT(testing::insert_finished_job(database, bob_id, "reduction/3", "accepted",
                                         report_with(0.8, std::nullopt, 0.03)),
            0);
  ASSERT_GT(testing::insert_finished_job(database, bob_id, "reduction/3", "wrong_answer", report_with(0.1)),
            0);
  ASSERT_GT(testing::insert_finished_job(database, cyd_id, "reduction/3", "accepted", report_with(0.1)), 0);
  ASSERT_GT(testing::insert_finished_job(database, ada_id, "reduction/2", "accepted", report_with(0.05)), 0);

  auto response = client().Get("/api/stages/reduction/block-tree/leaderboard");
  ASSERT_EQ(response->status, 200) << response->body;
  const json board = json::parse(response->body);
  EXPECT_EQ(board["stage"], "reduction/3");
  ASSERT_EQ(board["entries"].size(), 2u) << board;
  const json& first = board["entries"][0];
  EXPECT_EQ(first["rank"], 1);
  EXPECT_EQ(first["name"], "bob b");
  EXPECT_EQ(first["time_ratio"], 0.8);
  EXPECT_EQ(first["time_ms"], 0.03);
  EXPECT_EQ(first["language"], "cuda");
  EXPECT_TRUE(first["at"].is_number_integer());
  EXPECT_GT(first["at"].get<std::int64_t>(), 1'700'000'000);
  EXPECT_EQ(board["entries"][1]["rank"], 2);
  EXPECT_EQ(board["entries"][1]["name"], "ada");
  EXPECT_EQ(board["entries"][1]["time_ratio"], 0.9);
  EXPECT_EQ(board["entries"][1]["language"], "rust");
  // The id works as well as the alias; the stage itself is still described at its own route.
  EXPECT_EQ(json::parse(client().Get("/api/stages/reduction/3/leaderboard")->body), board);
  EXPECT_EQ(json::parse(client().Get("/api/stages/reduction/3")->body)["id"], "reduction/3");
  EXPECT_EQ(json::parse(client().Get("/api/stages/reduction/1/leaderboard")->body)["entries"], json::array());
  auto unknown = client().Get("/api/stages/reduction/99/leaderboard");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_NE(json::parse(unknown->body)["error"].get<std::string>().find("reduction/99"), std::string::npos);
}

// The node answering says who it is and what its store is; every node of the store is listed, and
// a report names the node, host and GPU that judged it.
TEST_F(Api, HealthAndReportsNameTheNodeAndItsGpu) {
  start({"--workers", "1", "--node-name", "judge one"});
  auto health = client().Get("/api/health");
  ASSERT_TRUE(health);
  ASSERT_EQ(health->status, 200) << health->body;
  const json state = json::parse(health->body);
  EXPECT_EQ(state["store"], on_postgres() ? "postgresql" : "sqlite");
  EXPECT_EQ(state["node"], "judge one");
  EXPECT_EQ(state["gpu"], "none");  // no GPU on this machine
  auto nodes = client().Get("/api/nodes");
  ASSERT_TRUE(nodes);
  ASSERT_EQ(nodes->status, 200);
  const json listed = json::parse(nodes->body);
  ASSERT_EQ(listed.size(), 1u) << listed;
  EXPECT_EQ(listed[0]["name"], "judge one");
  EXPECT_EQ(listed[0]["workers"], 1);
  EXPECT_EQ(listed[0]["http"], true);
  EXPECT_EQ(listed[0]["host"], state["host"]);

  const std::string token = sign_in("ada");
  auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  ASSERT_EQ(response->status, 202);
  const json job = wait_done(token, json::parse(response->body)["id"].get<std::int64_t>());
  EXPECT_EQ(job["report"]["judged_by"]["node"], "judge one");
  EXPECT_EQ(job["report"]["judged_by"]["host"], state["host"]);
  EXPECT_EQ(job["report"]["judged_by"]["gpu"], "none");
}

TEST_F(Api, AKnownPathAskedWithTheWrongMethodAnswers405) {
  start();
  auto put_jobs = client().Put("/api/jobs", "{}", "application/json");
  ASSERT_EQ(put_jobs->status, 405);
  EXPECT_EQ(put_jobs->get_header_value("Allow"), "POST");
  EXPECT_TRUE(json::parse(put_jobs->body)["error"].is_string());
  auto delete_me = client().Delete("/api/me");
  EXPECT_EQ(delete_me->status, 405);
  EXPECT_EQ(delete_me->get_header_value("Allow"), "GET, PUT");
  auto post_health = client().Post("/api/health", "{}", "application/json");
  EXPECT_EQ(post_health->status, 405);
  EXPECT_EQ(post_health->get_header_value("Allow"), "GET");
  EXPECT_EQ(client().Delete("/api/stages/reduction/3/leaderboard")->status, 405);
  EXPECT_EQ(client().Post("/api/jobs/1", "{}", "application/json")->status, 405);
  EXPECT_EQ(client().Post("/index.html", "{}", "application/json")->status, 405);
  // Unknown paths are still 404, as JSON.
  auto unknown = client().Get("/api/nothing-here");
  EXPECT_EQ(unknown->status, 404);
  EXPECT_TRUE(json::parse(unknown->body)["error"].is_string());
  EXPECT_EQ(client().Put("/api/nothing-here", "{}", "application/json")->status, 404);
  // Methods a path does answer still reach it.
  EXPECT_EQ(client().Get("/api/health")->status, 200);
  EXPECT_EQ(client().Put("/api/me", R"({"leaderboard": true})", "application/json")->status, 401);
}

}  // namespace
}  // namespace cudojo::api_testing

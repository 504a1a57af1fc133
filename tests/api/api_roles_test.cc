// Every route, tried as each of the roles there are today: anyone (no sign-in), another learner,
// and the learner whose work it is. A learner never sees another learner's jobs, sources, reports,
// history or progress; a route that needs a learner answers 401 to anyone else.
#include "api_test_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(Api, EveryRouteAnswersEachRoleAsItSays) {
  start({"--workers", "0"});
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  const auto [id, path] = queued_job(ada);
  const std::string job = "/api/jobs/" + std::to_string(id);
  const httplib::Headers as_ada = {{"Authorization", "Bearer " + ada}};
  const httplib::Headers as_bob = {{"Authorization", "Bearer " + bob}};
  const httplib::Headers as_anyone = {};
  const httplib::Headers as_stranger = {{"Authorization", "Bearer not-a-token"}};

  // Anyone: the course, the page, the server's state, signing up.
  for (const char* open : {"/api/health", "/api/nodes", "/api/stages", "/api/stages/reduction/3",
                           "/api/stages/reduction/3/leaderboard", "/index.html"}) {
    EXPECT_EQ(client().Get(open, as_anyone)->status, 200) << open;
    EXPECT_EQ(client().Get(open, as_bob)->status, 200) << open;
  }
  EXPECT_EQ(client().Post("/api/learners", as_anyone, R"({"name": "carol"})", "application/json")->status,
            201);

  // A learner's own routes: 401 without a known token, the learner's own answer with one.
  struct Route {
    std::string method, path;
  };
  for (const Route& route : std::vector<Route>{{"GET", job},
                                               {"POST", job + "/ticket"},
                                               {"POST", job + "/share"},
                                               {"GET", job + "/share"},
                                               {"GET", path},
                                               {"GET", "/api/history"},
                                               {"GET", "/api/progress"},
                                               {"GET", "/api/me"},
                                               {"PUT", "/api/me"},
                                               {"POST", "/api/jobs"}}) {
    for (const auto* headers : {&as_anyone, &as_stranger}) {
      const auto answer =
          route.method == "GET" ? client().Get(route.path.c_str(), *headers)
          : route.method == "PUT"
              ? client().Put(route.path.c_str(), *headers, R"({"leaderboard": true})", "application/json")
              : client().Post(route.path.c_str(), *headers, R"({"stage": "reduction/2", "source": "x"})",
                              "application/json");
      ASSERT_TRUE(answer) << route.method << " " << route.path;
      EXPECT_EQ(answer->status, 401) << route.method << " " << route.path;
    }
  }
  // Another learner: ada's job does not exist for bob, whatever he asks of it.
  EXPECT_EQ(client().Get(job.c_str(), as_bob)->status, 404);
  EXPECT_EQ(client().Post((job + "/ticket").c_str(), as_bob, "{}", "application/json")->status, 404);
  EXPECT_EQ(client().Post((job + "/share").c_str(), as_bob, "{}", "application/json")->status, 404);
  EXPECT_EQ(client().Get((job + "/share").c_str(), as_bob)->status, 404);
  EXPECT_EQ(client().Delete((job + "/share").c_str(), as_bob)->status, 404);
  EXPECT_EQ(request_from("127.0.0.1", server_->port(), "GET", path, bearer(bob)).first, 404);
  const json bobs_history = json::parse(client().Get("/api/history", as_bob)->body);
  EXPECT_TRUE(bobs_history["jobs"].empty()) << bobs_history;
  EXPECT_TRUE(json::parse(client().Get("/api/progress", as_bob)->body)["stages"].empty());
  EXPECT_EQ(json::parse(client().Get("/api/me", as_bob)->body)["name"], "bob");
  // The learner: their job with its source, its ticket and stream, their history and account.
  const auto own = client().Get(job.c_str(), as_ada);
  ASSERT_EQ(own->status, 200);
  EXPECT_EQ(json::parse(own->body)["source"], "x");
  EXPECT_EQ(client().Post((job + "/ticket").c_str(), as_ada, "{}", "application/json")->status, 201);
  const int stream = open_event_stream(server_->port(), path, bearer(ada));
  EXPECT_GE(stream, 0);
  if (stream >= 0) close(stream);
  EXPECT_EQ(json::parse(client().Get("/api/history", as_ada)->body)["jobs"][0]["id"], id);
  EXPECT_EQ(json::parse(client().Get("/api/me", as_ada)->body)["name"], "ada");
  EXPECT_EQ(client().Put("/api/me", as_ada, R"({"leaderboard": true})", "application/json")->status, 200);
  // Their job's link: none yet, and none while the job waits for its verdict.
  EXPECT_EQ(json::parse(client().Get((job + "/share").c_str(), as_ada)->body)["shared"], false);
  EXPECT_EQ(client().Post((job + "/share").c_str(), as_ada, "{}", "application/json")->status, 409);
}

}  // namespace
}  // namespace cudojo::api_testing

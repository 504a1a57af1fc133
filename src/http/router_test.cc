#include "http/router.h"

#include <gtest/gtest.h>

namespace cudojo::http {
namespace {

Handler named(std::string name) {
  return [name](const Request&, Response& response) { response.body = name; };
}

std::string run(const RouteLookup& found) {
  Response response;
  found.route->handler(Request{}, response);
  return response.body;
}

TEST(Router, TheFirstPatternThatMatchesDecides) {
  Router router;
  router.add("GET", R"(/api/stages/(.+)/leaderboard)", named("leaderboard"));
  router.add("GET", R"(/api/stages/(.+))", named("stage"));
  const auto board = router.find("GET", "/api/stages/reduction/3/leaderboard");
  ASSERT_TRUE(board.route);
  EXPECT_EQ(run(board), "leaderboard");
  ASSERT_EQ(board.matches.size(), 2u);
  EXPECT_EQ(board.matches[1], "reduction/3");
  const auto stage = router.find("GET", "/api/stages/reduction/3");
  ASSERT_TRUE(stage.route);
  EXPECT_EQ(run(stage), "stage");
}

TEST(Router, AKnownPathAskedWithAnotherMethodNamesTheMethodsItAnswers) {
  Router router;
  router.add("GET", "/api/me", named("get"));
  router.add("PUT", "/api/me", named("put"));
  const auto wrong = router.find("DELETE", "/api/me");
  EXPECT_FALSE(wrong.route);
  EXPECT_EQ(wrong.allow, "GET, PUT");
  const auto head = router.find("HEAD", "/api/me");  // HEAD wherever GET is
  ASSERT_TRUE(head.route);
  EXPECT_EQ(run(head), "get");
  const auto missing = router.find("GET", "/api/nothing");
  EXPECT_FALSE(missing.route);
  EXPECT_TRUE(missing.allow.empty());
}

TEST(Router, ExactPathsAreNotPatterns) {
  Router router;
  router.add_exact("GET", "/app.js", named("app"), Runs::kOnEventLoop);
  EXPECT_FALSE(router.find("GET", "/appXjs").route);  // "." is not "any character" here
  const auto found = router.find("GET", "/app.js");
  ASSERT_TRUE(found.route);
  EXPECT_EQ(found.route->runs, Runs::kOnEventLoop);
  EXPECT_EQ(router.find("POST", "/app.js").allow, "GET");
}

TEST(Router, APathAsLongAsTheTargetLimitIsMatchedWithoutTrouble) {
  Router router;
  router.add("GET", R"(/api/stages/(.+)/leaderboard)", named("leaderboard"));
  router.add("GET", R"(/api/stages/(.+))", named("stage"));
  const std::string long_path = "/api/stages/" + std::string(8 * 1024, 'x');
  const auto found = router.find("GET", long_path);
  ASSERT_TRUE(found.route);
  EXPECT_EQ(run(found), "stage");
}

}  // namespace
}  // namespace cudojo::http

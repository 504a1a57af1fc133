// DELETE /api/jobs/{id}: a learner takes back their own job while it is still queued, tried as every
// kind of caller (nobody, a token nobody holds, another learner, a member of staff, the owner), and
// on a job a judge has finished already.
#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(ClassApi, OnlyTheOwnerWithdrawsAQueuedJobAndItLeavesTheQueue) {
  start({"--workers", "0"});  // nothing judges: the jobs stay queued
  const std::string ada = sign_in("ada"), bob = sign_in("bob"), admin = make_admin();
  const auto [first, first_events] = queued_job(ada);
  const auto [second, second_events] = queued_job(ada);
  const auto [bobs, bobs_events] = queued_job(bob);
  const std::string path = "/api/jobs/" + std::to_string(first);

  EXPECT_EQ(ask("DELETE", path).status, 401);
  EXPECT_EQ(ask("DELETE", path, "not-a-token").status, 401);
  EXPECT_EQ(ask("DELETE", path, admin).status, 403);
  EXPECT_EQ(ask("DELETE", path, bob).status, 404);  // as for a job that does not exist
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(bobs), bob).body["position"], 2);

  const Answer withdrawn = ask("DELETE", path, ada);
  EXPECT_EQ(withdrawn.status, 200) << withdrawn.text;
  EXPECT_EQ(withdrawn.body["withdrawn"], true);
  EXPECT_EQ(ask("GET", path, ada).status, 404);
  EXPECT_EQ(ask("DELETE", path, ada).status, 404);
  // The places behind it move up; the learner's other job stays.
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(bobs), bob).body["position"], 1);
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(second), ada).body["state"], "queued");
  EXPECT_EQ(ask("GET", "/api/history", ada).body["jobs"].size(), 1u);
}

TEST_F(ClassApi, AJobAlreadyJudgedIsNotWithdrawn) {
  start();  // one judge: without a GPU it answers no_device at once
  const std::string ada = sign_in("ada");
  const auto response = submit(ada, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  EXPECT_EQ(wait_done(ada, id)["state"], "done");
  const Answer refused = ask("DELETE", "/api/jobs/" + std::to_string(id), ada);
  EXPECT_EQ(refused.status, 409) << refused.text;
  EXPECT_NE(refused.body.value("error", "").find("only a job still queued"), std::string::npos)
      << refused.text;
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(id), ada).status, 200);
}

}  // namespace
}  // namespace cudojo::api_testing

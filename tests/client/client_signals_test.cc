// `cudojo submit` waiting on a job, as its own process (tests/client/client_process.h), while what
// a learner's terminal and a class's server do to it happens for real: Ctrl-C (SIGINT to the
// process) while the job is queued and once a judge has started it, and the server stopped under it
// (SIGTERM, SIGKILL, and killed behind a proxy that then answers 502). A server with --workers 0
// judges nothing, so the job waits in the queue; "a judge started it" is a claim in the server's
// store, made from this process as a judge node on another machine makes it.
#include <chrono>

#include "../api/api_test_support.h"
#include "cli/client_commands.h"
#include "client_process.h"
#include "common/limits.h"
#include "report/verdict.h"
#include "serve/store.h"

namespace cudojo {
namespace {

using namespace api_testing;
using client_testing::ClientProcess;
using client_testing::sent_job_id;
using Clock = std::chrono::steady_clock;

class ClientSignals : public Api {
 protected:
  std::string url() const { return "http://127.0.0.1:" + std::to_string(front_port()); }
  ClientProcess::Environment env(ClientProcess::Environment more = {}) const {
    more["XDG_CONFIG_HOME"] = (data_ / "config").string();
    return more;
  }
  fs::path runs() const { return data_ / "runs"; }
  // `cudojo login URL` with the token in CUDOJO_TOKEN, as the learner's shell would.
  void login(const std::string& token, const std::string& server_url) {
    ClientProcess login({"login", server_url}, env({{"CUDOJO_TOKEN", token}}), runs(), "login");
    const auto code = login.wait(30s);
    ASSERT_EQ(code, 0) << login.out() << login.err();
  }
  // `cudojo submit` of a kernel that does not compile, once it says that its job waits (no judge).
  std::unique_ptr<ClientProcess> submit_until_it_waits(std::int64_t& id) {
    auto run = std::make_unique<ClientProcess>(
        std::vector<std::string>{"submit", "reduction/2",
                                 testing::submission("reduction-2/compile_error.cu")},
        env(), runs(), "submit");
    EXPECT_TRUE(run->wait_for_err("no judge is online; your job waits", 20s)) << run->err();
    id = sent_job_id(run->err());
    EXPECT_GT(id, 0) << run->err();
    return run;
  }
  httplib::Result job(const std::string& token, std::int64_t id) {
    return client().Get(("/api/jobs/" + std::to_string(id)).c_str(), {{"Authorization", "Bearer " + token}});
  }
  static double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};

TEST_F(ClientSignals, CtrlCWhileQueuedWithdrawsTheJobAndExits130) {
  start({"--workers", "0"});
  const std::string token = sign_in("fay");
  login(token, url());
  std::int64_t id = 0;
  auto waiting = submit_until_it_waits(id);
  ASSERT_GT(id, 0);
  const auto interrupted = Clock::now();
  ASSERT_EQ(kill(waiting->pid(), SIGINT), 0);
  const auto code = waiting->wait(10s);
  ASSERT_TRUE(code) << "still running 10 s after Ctrl-C: " << waiting->err();
  EXPECT_EQ(*code, cli::kExitInterrupted) << waiting->err();
  EXPECT_LT(seconds_since(interrupted), 3.0) << "Ctrl-C must end the wait promptly";
  const std::string said = waiting->err();
  EXPECT_NE(said.find("withdrew job " + std::to_string(id) + ": it had not started"), std::string::npos)
      << said;
  EXPECT_EQ(waiting->out(), "") << "no report, and nothing half-printed";
  // Withdrawn through the API: gone from the job's address and from the history...
  const auto gone = job(token, id);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 404) << gone->body;
  const auto history = client().Get("/api/history", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(history);
  EXPECT_EQ(json::parse(history->body)["jobs"].size(), 0u) << history->body;
  // ...and from the queue: nothing waits ahead of a new job, and the learner's every pending place
  // is free again.
  for (int i = 0; i < ServeLimits{}.max_pending_per_learner; ++i) {
    const auto queued = submit(token, {{"stage", "reduction/2"}, {"source", compile_error_source()}});
    ASSERT_TRUE(queued);
    ASSERT_EQ(queued->status, 202) << "place " << i << ": " << queued->body;
    if (i == 0) EXPECT_EQ(json::parse(queued->body)["position"], 0) << queued->body;
  }
  // The login is still there for the next command.
  ClientProcess history_run({"history"}, env(), runs(), "history");
  EXPECT_EQ(history_run.wait(30s), 0) << history_run.err();
}

TEST_F(ClientSignals, CtrlCOnceAJudgeStartedTheJobLeavesItRunningAndNamesStatus) {
  start({"--workers", "0"});
  const std::string token = sign_in("gil");
  login(token, url());
  std::int64_t id = 0;
  auto waiting = submit_until_it_waits(id);
  ASSERT_GT(id, 0);
  // A judge elsewhere claims it and reaches the tests.
  auto store = open_store(store_location());
  const auto claimed = store->claim_next("judge-elsewhere#1", 120);
  ASSERT_TRUE(claimed);
  ASSERT_EQ(claimed->id, id);
  ASSERT_TRUE(store->set_phase(claimed->claim(), "tests"));
  const std::string running = "job " + std::to_string(id) + ": tests";
  ASSERT_TRUE(waiting->wait_for_err(running, 10s)) << waiting->err();

  const auto interrupted = Clock::now();
  ASSERT_EQ(kill(waiting->pid(), SIGINT), 0);
  const auto code = waiting->wait(10s);
  ASSERT_TRUE(code) << waiting->err();
  EXPECT_EQ(*code, cli::kExitInterrupted) << waiting->err();
  EXPECT_LT(seconds_since(interrupted), 3.0);
  const std::string said = waiting->err();
  EXPECT_NE(said.find("the job goes on"), std::string::npos) << said;
  EXPECT_NE(said.find("`cudojo status " + std::to_string(id) + "`"), std::string::npos) << said;
  EXPECT_EQ(said.find("withdrew"), std::string::npos) << said;
  const auto still = job(token, id);
  ASSERT_TRUE(still);
  ASSERT_EQ(still->status, 200) << still->body;
  EXPECT_EQ(json::parse(still->body)["state"], "running");

  // `cudojo status N` follows it on to its verdict.
  ClientProcess status({"status", std::to_string(id)}, env(), runs(), "status");
  ASSERT_TRUE(status.wait_for_err(running, 10s)) << status.err();
  ASSERT_TRUE(store->finish(claimed->claim(), "accepted", report_with(0.9)));
  const auto followed = status.wait(30s);
  ASSERT_TRUE(followed) << status.err();
  EXPECT_EQ(*followed, exit_code(Verdict::kAccepted)) << status.out() << status.err();
  EXPECT_NE(status.out().find("accepted"), std::string::npos) << status.out();
}

// The server goes while the client waits: the client ends on its own within seconds (five polls
// a second apart), with server's exit code (3, as `submit --help` says), saying the job is kept and
// which command follows it; the job is there when the server is back.
class ServerStoppedMidWait : public ClientSignals, public ::testing::WithParamInterface<int> {};

TEST_P(ServerStoppedMidWait, TheClientEndsSayingHowToFollowTheJob) {
  start({"--workers", "0"});
  const int port = server_->port();
  const std::string token = sign_in("hana");
  login(token, url());
  std::int64_t id = 0;
  auto waiting = submit_until_it_waits(id);
  ASSERT_GT(id, 0);
  const auto stopped = Clock::now();
  server_->stop(GetParam());
  const auto code = waiting->wait(40s);
  ASSERT_TRUE(code) << "the client hung after the server stopped: " << waiting->err();
  EXPECT_EQ(*code, cli::kExitServer) << waiting->err();
  EXPECT_LT(seconds_since(stopped), 20.0) << waiting->err();
  const std::string said = waiting->err();
  EXPECT_NE(said.find("the server stopped answering while following job " + std::to_string(id)),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("`cudojo status " + std::to_string(id) + "` follows it when the server is back"),
            std::string::npos)
      << said;

  start({"--workers", "1"}, port);  // back, with a judge: without a GPU the kernel is a compile error
  ClientProcess status({"status", std::to_string(id)}, env(), runs(), "status");
  const auto followed = status.wait(120s);
  ASSERT_TRUE(followed) << status.err();
  EXPECT_EQ(*followed, exit_code(Verdict::kCompileError)) << status.out() << status.err();
}

INSTANTIATE_TEST_SUITE_P(BySignal, ServerStoppedMidWait, ::testing::Values(SIGTERM, SIGKILL),
                         [](const auto& info) { return info.param == SIGTERM ? "Sigterm" : "Sigkill"; });

// Behind a proxy the client never sees the server go: nginx answers 502 Bad Gateway instead (503
// under the deployed configuration). That is the server stopping too, not a refusal.
TEST_F(ClientSignals, AServerKilledBehindNginxIsAServerThatStoppedAnswering) {
  if (!fs::exists(NginxProxy::kNginx))
    GTEST_SKIP() << "nginx is not installed (scripts/setup.sh installs it)";
  start({"--workers", "0"});
  NginxProxy edge(data_ / "edge", server_->port());
  const std::string edge_url = "http://127.0.0.1:" + std::to_string(edge.port());
  login(sign_in("ines"), edge_url);
  std::int64_t id = 0;
  auto waiting = submit_until_it_waits(id);
  ASSERT_GT(id, 0);
  server_->stop(SIGKILL);
  const auto code = waiting->wait(40s);
  ASSERT_TRUE(code) << waiting->err();
  EXPECT_EQ(*code, cli::kExitServer) << waiting->err();
  const std::string said = waiting->err();
  EXPECT_NE(said.find("the server stopped answering while following job " + std::to_string(id)),
            std::string::npos)
      << said;
  // nginx's 502, or the JSON 503 docs/deploy/cudojo-locations.conf gives in its place.
  EXPECT_NE(said.find("(HTTP 50"), std::string::npos) << said;
  EXPECT_NE(said.find("`cudojo status " + std::to_string(id) + "`"), std::string::npos) << said;
}

TEST(ClientHelp, SubmitDocumentsItsExitCodes) {
  const auto help = testing::run_cli("submit --help");
  EXPECT_EQ(help.exit_code, 0) << help.out;
  EXPECT_NE(help.out.find("3 the server refused, could not be reached or stopped answering"),
            std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("130 Ctrl-C"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Ctrl-C while the job waits in the queue withdraws it"), std::string::npos)
      << help.out;
}

}  // namespace
}  // namespace cudojo

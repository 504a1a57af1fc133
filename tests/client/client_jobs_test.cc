// The terminal client's jobs (issue #27): submit (its progress, its exit code, --json, --no-wait,
// a refused kernel), Ctrl-C and a server stopped while waiting, status, history a page at a time,
// and pull (client_command_fixture.h).
#include "client_command_fixture.h"

namespace cudojo::client_testing {
namespace {

TEST_F(ClientCommand, SubmitOfACompileErrorPrintsTheLearnersLineAndChecksExitCode) {
  start();
  ASSERT_EQ(login_with_token(sign_in("carol")).code, 0);
  const Ran ran = submit(broken_kernel());
  EXPECT_EQ(ran.code, exit_code(Verdict::kCompileError)) << ran.out << ran.err;
  EXPECT_NE(ran.out.find("atomicAdd(out, X[j]);"), std::string::npos) << ran.out;
  // The queue as the submission's answer found it, said on the line that names the job: a warm judge
  // may start the job before the first poll, so a poll's "queued" would not always come.
  EXPECT_NE(ran.err.find(" as job 1 to " + url() + ": queued, 0 ahead\n"), std::string::npos) << ran.err;
}

// The kernel is read as `check` reads it: a --lang that contradicts the extension is a usage error
// naming both, and nothing is sent.
TEST_F(ClientCommand, ALangThatContradictsTheExtensionIsRefusedBeforeSending) {
  start();
  ASSERT_EQ(login_with_token(sign_in("erin")).code, 0);
  cli::SubmitOptions options;
  options.where = where();
  options.stage = "reduction/2";
  options.file = broken_kernel();
  options.lang = "python";
  const Ran ran =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_submit(options, out, err); });
  EXPECT_EQ(ran.code, cli::kExitUsage) << ran.err;
  EXPECT_NE(ran.err.find("--lang python"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find(".cu"), std::string::npos) << ran.err;
  expect_empty_history();
}

TEST_F(ClientCommand, SubmitJsonIsTheApisJob) {
  start();
  const std::string token = sign_in("dan");
  ASSERT_EQ(login_with_token(token).code, 0);
  const Ran ran = submit(broken_kernel(), false, true);
  EXPECT_EQ(ran.code, exit_code(Verdict::kCompileError)) << ran.err;
  const json printed = json::parse(ran.out);
  const auto id = printed["id"].get<std::int64_t>();
  auto answer =
      client().Get(("/api/jobs/" + std::to_string(id)).c_str(), {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(answer);
  EXPECT_EQ(printed, json::parse(answer->body));
  EXPECT_EQ(printed["verdict"], "compile_error");
}

TEST_F(ClientCommand, NoWaitThenStatusThenHistoryThenPull) {
  start();
  ASSERT_EQ(login_with_token(sign_in("erin")).code, 0);
  const Ran queued = submit(broken_kernel(), true);
  ASSERT_EQ(queued.code, 0) << queued.err;
  const std::int64_t id = job_id_in(queued.out);
  ASSERT_GT(id, 0) << queued.out;
  EXPECT_NE(queued.out.find("cudojo status " + std::to_string(id)), std::string::npos) << queued.out;

  cli::StatusOptions status;
  status.where = where();
  status.job = id;
  status.follow.poll_seconds = 0.1;
  const Ran followed =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_status(status, out, err); });
  EXPECT_EQ(followed.code, exit_code(Verdict::kCompileError)) << followed.err;
  EXPECT_NE(followed.out.find("X[j]"), std::string::npos) << followed.out;

  ASSERT_EQ(submit(broken_kernel()).code, exit_code(Verdict::kCompileError));
  const Ran listed = history();
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find(std::to_string(id) + "  reduction/2"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find(std::to_string(id + 1) + "  reduction/2"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("compile_error"), std::string::npos) << listed.out;

  cli::PullOptions pull;
  pull.where = where();
  pull.stage = "reduction/2";
  pull.output = (data_ / "pulled.cu").string();
  const Ran pulled =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_pull(pull, out, err); });
  ASSERT_EQ(pulled.code, 0) << pulled.err;
  std::ifstream in(pull.output);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), compile_error_source());
  const Ran again = call([&](std::ostream& out, std::ostream& err) { return cli::run_pull(pull, out, err); });
  EXPECT_EQ(again.code, cli::kExitUsage);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  pull.force = true;
  EXPECT_EQ(call([&](std::ostream& out, std::ostream& err) { return cli::run_pull(pull, out, err); }).code,
            0);
}

TEST_F(ClientCommand, CtrlCWhileQueuedWithdrawsTheJob) {
  start({"--workers", "0"});
  const std::string token = sign_in("fay");
  ASSERT_EQ(login_with_token(token).code, 0);
  auto running = std::async(std::launch::async, [&] { return submit(broken_kernel()); });
  std::this_thread::sleep_for(1500ms);  // sent, followed, said to wait
  cli::request_interrupt();
  const Ran ran = running.get();
  EXPECT_EQ(ran.code, cli::kExitInterrupted) << ran.err;
  EXPECT_NE(ran.err.find("no judge is online; your job waits"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("withdrew job"), std::string::npos) << ran.err;
  const std::int64_t id = job_id_in(ran.err);
  ASSERT_GT(id, 0) << ran.err;
  auto answer =
      client().Get(("/api/jobs/" + std::to_string(id)).c_str(), {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 404) << answer->body;
}

TEST_F(ClientCommand, AServerStoppedMidWaitSaysHowToResume) {
  start({"--workers", "0"});
  ASSERT_EQ(login_with_token(sign_in("gus")).code, 0);
  auto running = std::async(std::launch::async, [&] { return submit(broken_kernel(), false, false, 2); });
  std::this_thread::sleep_for(1500ms);
  server_->stop(SIGTERM);
  const Ran ran = running.get();
  EXPECT_EQ(ran.code, kExitServer) << ran.err;
  const std::int64_t id = job_id_in(ran.err);
  ASSERT_GT(id, 0) << ran.err;
  EXPECT_NE(ran.err.find("the server stopped answering"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("`cudojo status " + std::to_string(id) + "`"), std::string::npos) << ran.err;
}

TEST_F(ClientCommand, AFullQueueSaysWhenToTryAgain) {
  start({"--workers", "0"});
  ASSERT_EQ(login_with_token(sign_in("ivy")).code, 0);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(submit(broken_kernel(), true).code, 0);  // a learner's four pending
  const Ran ran = submit(broken_kernel(), true);
  EXPECT_EQ(ran.code, kExitServer) << ran.out;
  EXPECT_NE(ran.err.find("the server is busy"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("HTTP 429; try again"), std::string::npos) << ran.err;
}

TEST_F(ClientCommand, AKernelThatIsNotUtf8IsAUsageErrorAndJsonSaysSo) {
  start();
  ASSERT_EQ(login_with_token(sign_in("ursula")).code, 0);
  const fs::path latin1 = data_ / "latin1.cu";
  std::ofstream(latin1) << "// ok\n// caf\xe9\n";
  const Ran ran = submit(latin1.string(), true, true);
  EXPECT_EQ(ran.code, cli::kExitUsage) << ran.err;
  EXPECT_NE(ran.err.find("line 2 (byte 0xE9) is not UTF-8"), std::string::npos) << ran.err;
  EXPECT_EQ(json::parse(ran.out, nullptr, false).value("kind", ""), "usage_error") << ran.out;
}

TEST_F(ClientCommand, StatusCtrlCLeavesTheQueuedJobAndPrintsJson) {
  start({"--workers", "0"});
  const std::string token = sign_in("wade");
  ASSERT_EQ(login_with_token(token).code, 0);
  const std::int64_t id = job_id_in(submit(broken_kernel(), true).out);
  ASSERT_GT(id, 0);
  cli::StatusOptions status{where(), id, {true, false, 0.1}};
  auto running = std::async(std::launch::async, [&] {
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_status(status, out, err); });
  });
  std::this_thread::sleep_for(1500ms);
  cli::request_interrupt();
  const Ran ran = running.get();
  EXPECT_EQ(ran.code, cli::kExitInterrupted) << ran.err;
  EXPECT_EQ(json::parse(ran.out, nullptr, false).value("kind", ""), "interrupted") << ran.out;
  auto answer =
      client().Get(("/api/jobs/" + std::to_string(id)).c_str(), {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200) << "status only looks; the job must still be there";
}

TEST_F(ClientCommand, PullWithoutForceWritesNotThroughADanglingLink) {
  start();
  ASSERT_EQ(login_with_token(sign_in("xena")).code, 0);
  ASSERT_EQ(submit(broken_kernel(), true).code, 0);
  fs::create_symlink(data_ / "elsewhere.cu", data_ / "link.cu");
  cli::PullOptions pull{where(), "reduction/2", (data_ / "link.cu").string(), false};
  const Ran ran = call([&](std::ostream& out, std::ostream& err) { return cli::run_pull(pull, out, err); });
  EXPECT_EQ(ran.code, cli::kExitUsage) << ran.out;
  EXPECT_FALSE(fs::exists(data_ / "elsewhere.cu"));
}

// History comes a page at a time: the footer names the command that shows the page before, and
// --before walks back to the first job, where it says there is nothing older.
TEST_F(ClientCommand, HistoryPagesBackWithBefore) {
  start();
  ASSERT_EQ(login_with_token(sign_in("gwen")).code, 0);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    const Ran queued = submit(broken_kernel(), true);
    ASSERT_EQ(queued.code, 0) << queued.err;
    ids.push_back(job_id_in(queued.out));
  }
  cli::HistoryOptions options;
  options.where = where();
  options.limit = 2;
  const auto page = [&] {
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_history(options, out, err); });
  };
  const Ran newest = page();
  ASSERT_EQ(newest.code, 0) << newest.err;
  EXPECT_NE(newest.out.find(std::to_string(ids[2]) + "  reduction/2"), std::string::npos) << newest.out;
  EXPECT_EQ(newest.out.find(std::to_string(ids[0]) + "  reduction/2"), std::string::npos) << newest.out;
  const std::string next = "cudojo history --before " + std::to_string(ids[1]);
  EXPECT_NE(newest.out.find(next), std::string::npos) << newest.out;

  options.before = ids[1];
  const Ran older = page();
  EXPECT_NE(older.out.find(std::to_string(ids[0]) + "  reduction/2"), std::string::npos) << older.out;
  EXPECT_EQ(older.out.find(std::to_string(ids[1]) + "  reduction/2"), std::string::npos) << older.out;
  EXPECT_EQ(older.out.find("--before"), std::string::npos) << "the oldest page offers an older one";

  options.before = ids[0];
  EXPECT_NE(page().out.find("no jobs before job " + std::to_string(ids[0])), std::string::npos);
}

}  // namespace
}  // namespace cudojo::client_testing

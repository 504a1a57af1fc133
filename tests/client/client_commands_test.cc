// The terminal as a client of a class server (issue #27): each command of src/cli/client_commands.h
// run in-process against a real `cudojo serve` (tests/api/api_test_support.h) on loopback. No GPU:
// a broken kernel ends as compile_error, which is the learner's path these tests follow; a server
// with --workers 0 keeps a job queued for the Ctrl-C and lost-server cases.
#include "cli/client_commands.h"

#include <sys/stat.h>

#include <future>

#include "../api/api_test_support.h"
#include "cli/cli_common.h"
#include "report/verdict.h"

namespace cudojo {
namespace {

using namespace api_testing;
using cli::kExitServer;

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

class ClientCommand : public Api {
 protected:
  void SetUp() override {
    Api::SetUp();
    if (IsSkipped()) return;
    servers_ = data_ / "config" / "cudojo" / "servers.json";
    cli::reset_interrupt();
    // These run in-process on loopback: a proxy in the shell that runs them is not theirs to use.
    for (const char* name : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) unsetenv(name);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(front_port()); }
  cli::ServerChoice where() const { return {"default", servers_}; }

  Ran login_with_token(const std::string& token) {
    cli::LoginOptions options;
    options.where = where();
    options.url = url();
    options.token = token;
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_login(options, out, err); });
  }
  Ran submit(const std::string& file, bool no_wait = false, bool json = false, int tries = 5) {
    cli::SubmitOptions options;
    options.where = where();
    options.stage = "reduction/2";
    options.file = file;
    options.no_wait = no_wait;
    options.follow.json = json;
    options.follow.poll_seconds = 0.1;
    options.follow.reconnect_tries = tries;
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_submit(options, out, err); });
  }
  Ran history(bool json = false) {
    cli::HistoryOptions options;
    options.where = where();
    options.json = json;
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_history(options, out, err); });
  }
  // After a login, the history is there and empty.
  void expect_empty_history() {
    const Ran listed = history();
    EXPECT_EQ(listed.code, 0) << listed.err;
    EXPECT_NE(listed.out.find("no jobs yet"), std::string::npos) << listed.out;
  }
  template <typename Body>
  static Ran call(Body&& body) {
    std::ostringstream out, err;
    Ran ran;
    ran.code = body(out, err);
    ran.out = out.str();
    ran.err = err.str();
    return ran;
  }
  static std::int64_t job_id_in(const std::string& text) {
    const auto at = text.find("job ");
    return at == std::string::npos ? 0 : std::stoll(text.substr(at + 4));
  }
  std::string broken_kernel() const { return testing::submission("reduction-2/compile_error.cu"); }

  fs::path servers_;
};

TEST_F(ClientCommand, LoginWithTokenKeepsItInAPrivateFile) {
  start();
  const std::string token = sign_in("ada");
  const Ran ran = login_with_token(token);
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("as ada"), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find(token), std::string::npos) << "the token must never be printed";
  EXPECT_EQ(ran.err.find(token), std::string::npos);
  struct stat file {
  }, folder{};
  ASSERT_EQ(stat(servers_.c_str(), &file), 0);
  ASSERT_EQ(stat(servers_.parent_path().c_str(), &folder), 0);
  EXPECT_EQ(file.st_mode & 0777, 0600u);
  EXPECT_EQ(folder.st_mode & 0777, 0700u);
  std::ifstream in(servers_);
  const json saved = json::parse(in);
  EXPECT_EQ(saved["servers"]["default"]["url"], url());
  EXPECT_EQ(saved["servers"]["default"]["token"], token);
}

TEST_F(ClientCommand, LoginTakesTheTokenFromTheEnvironment) {
  start();
  const std::string token = sign_in("grace");
  setenv("CUDOJO_TOKEN", token.c_str(), 1);
  const Ran ran = login_with_token("");
  unsetenv("CUDOJO_TOKEN");
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("as grace"), std::string::npos) << ran.out;
}

TEST_F(ClientCommand, LoginWithAnInviteCodeJoinsTheClass) {
  if (on_postgres()) GTEST_SKIP() << kSqliteOnly;
  fs::create_directories(data_);
  const auto made = testing::run_cli("class create 'Client Class' --data-dir " + data_.string() + " --json");
  ASSERT_EQ(made.exit_code, 0) << made.out;
  const json created = json::parse(made.out.substr(made.out.find('{')));
  start();
  cli::LoginOptions options;
  options.where = where();
  options.url = url();
  options.invite = created["invite_code"].get<std::string>();
  options.name = "Ada L";
  const Ran ran =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_login(options, out, err); });
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("joined Client Class as Ada L"), std::string::npos) << ran.out;
  expect_empty_history();
}

TEST_F(ClientCommand, ARefusedTokenSaysToLogInAgain) {
  start();
  const Ran refused = login_with_token(std::string(64, 'f'));
  EXPECT_EQ(refused.code, kExitServer);
  EXPECT_NE(refused.err.find("refused this token"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(servers_)) << "a refused token is not saved";
  // A token that worked at login and was reset since.
  ASSERT_EQ(login_with_token(sign_in("bob")).code, 0);
  std::ifstream in(servers_);
  json saved = json::parse(in);
  in.close();
  saved["servers"]["default"]["token"] = std::string(64, 'e');
  std::ofstream(servers_) << saved.dump();
  const Ran ran = history();
  EXPECT_EQ(ran.code, kExitServer);
  EXPECT_NE(ran.err.find("the server refused the token; cudojo login again"), std::string::npos) << ran.err;
  // Under --json, stdout is JSON even when the command fails.
  const Ran as_json = history(true);
  EXPECT_EQ(as_json.code, kExitServer);
  const json failure = json::parse(as_json.out);
  EXPECT_EQ(failure["kind"], "token_refused");
  EXPECT_EQ(failure["exit_code"], kExitServer);
}

TEST_F(ClientCommand, AServerThatIsNotThereCannotBeReached) {
  cli::LoginOptions options;
  options.where = where();
  options.url = "http://127.0.0.1:1";
  options.token = "x";
  const Ran ran =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_login(options, out, err); });
  EXPECT_EQ(ran.code, kExitServer);
  EXPECT_NE(ran.err.find("cannot reach http://127.0.0.1:1"), std::string::npos) << ran.err;
  const Ran not_logged_in = submit(broken_kernel());
  EXPECT_EQ(not_logged_in.code, cli::kExitUsage);
  EXPECT_NE(not_logged_in.err.find("cudojo login"), std::string::npos) << not_logged_in.err;
}

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

// HTTPS as a school serves it: nginx with TLS in front of the server, its certificate signed by an
// authority the system does not know. The client refuses it until `login --cacert` names it, and
// the later commands use the certificate saved with the server.
TEST_F(ClientCommand, HttpsWithASchoolsOwnCertificateNeedsCacert) {
  if (!fs::exists(NginxProxy::kNginx))
    GTEST_SKIP() << "nginx is not installed (scripts/setup.sh installs it)";
  start();
  const fs::path tls = data_ / "tls";
  fs::create_directories(tls);
  const std::string make_certificate =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext "
      "subjectAltName=IP:127.0.0.1 "
      "-keyout " +
      (tls / "key.pem").string() + " -out " + (tls / "cert.pem").string() + " 2>/dev/null";
  ASSERT_EQ(std::system(make_certificate.c_str()), 0);
  const int port = NginxProxy::free_port();
  {
    std::ofstream conf(tls / "nginx.conf");
    if (geteuid() == 0) conf << "user root;\n";
    conf << "worker_processes 1;\ndaemon off;\npid " << (tls / "nginx.pid").string() << ";\nerror_log "
         << (tls / "error.log").string()
         << ";\nevents { worker_connections 64; }\nhttp {\n  access_log off;\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
      conf << "  " << temp << "_temp_path " << (tls / temp).string() << ";\n";
    conf << "  server {\n    listen 127.0.0.1:" << port << " ssl;\n    ssl_certificate "
         << (tls / "cert.pem").string() << ";\n    ssl_certificate_key " << (tls / "key.pem").string()
         << ";\n    location / { proxy_pass http://127.0.0.1:" << server_->port() << "; }\n  }\n}\n";
  }
  const pid_t nginx = fork();
  if (nginx == 0) {
    const std::string prefix = tls.string(), config = (tls / "nginx.conf").string();
    execl(NginxProxy::kNginx, NginxProxy::kNginx, "-p", prefix.c_str(), "-c", config.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int waited_ms = 0; waited_ms < 10'000; waited_ms += 50) {
    const int fd = http::connect_to_loopback(port);
    if (fd >= 0) {
      close(fd);
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  cli::LoginOptions options;
  options.where = where();
  options.url = "https://127.0.0.1:" + std::to_string(port);
  options.token = sign_in("tess");
  const auto login = [&] {
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_login(options, out, err); });
  };
  const Ran untrusted = login();
  EXPECT_EQ(untrusted.code, kExitServer) << untrusted.out;
  EXPECT_NE(untrusted.err.find("not trusted"), std::string::npos) << untrusted.err;
  options.cacert = (tls / "cert.pem").string();
  const Ran trusted = login();
  EXPECT_EQ(trusted.code, 0) << trusted.err;
  expect_empty_history();
  kill(nginx, SIGTERM);
  waitpid(nginx, nullptr, 0);
}

TEST_F(ClientCommand, LogoutRemovesTheEntry) {
  start();
  ASSERT_EQ(login_with_token(sign_in("hal")).code, 0);
  const Ran ran =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_logout(where(), out, err); });
  EXPECT_EQ(ran.code, 0) << ran.err;
  std::ifstream in(servers_);
  EXPECT_FALSE(json::parse(in)["servers"].contains("default"));
  const Ran again =
      call([&](std::ostream& out, std::ostream& err) { return cli::run_logout(where(), out, err); });
  EXPECT_EQ(again.code, cli::kExitUsage);
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

TEST_F(ClientCommand, AServersFileWithAFieldOfTheWrongTypeIsAConfigError) {
  fs::create_directories(servers_.parent_path());
  std::ofstream(servers_) << R"({"servers": {"default": {"url": 5}}})";
  const Ran ran = history(true);
  EXPECT_EQ(ran.code, cli::kExitUsage) << ran.err;
  EXPECT_EQ(json::parse(ran.out, nullptr, false).value("kind", ""), "config_error") << ran.out << ran.err;
}

TEST_F(ClientCommand, ACorruptServersFileStopsAnInviteBeforeItJoins) {
  if (on_postgres()) GTEST_SKIP() << kSqliteOnly;
  fs::create_directories(servers_.parent_path());
  const auto made = testing::run_cli("class create 'Review' --data-dir " + data_.string() + " --json");
  ASSERT_EQ(made.exit_code, 0) << made.out;
  start();
  cli::LoginOptions options;
  options.where = where();
  options.url = url();
  options.invite = json::parse(made.out.substr(made.out.find('{')))["invite_code"].get<std::string>();
  options.name = "Vera";
  const auto join = [&] {
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_login(options, out, err); });
  };
  std::ofstream(servers_) << "not json";
  EXPECT_EQ(join().code, cli::kExitUsage);
  fs::remove(servers_);
  const Ran again = join();  // the name was not taken by the refused attempt
  EXPECT_EQ(again.code, 0) << again.err;
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

}  // namespace
}  // namespace cudojo

// The client through a real forward proxy: Debian's tinyproxy on a free loopback port, in the
// foreground with a configuration this test writes, named to `cudojo` (its own process) only by the
// environment, http_proxy and no_proxy as curl reads them. tinyproxy logs the request line of each
// request it carries, which is how a test tells that a request went through it.
#include "../api/api_test_support.h"
#include "cli/client_commands.h"
#include "client_process.h"
#include "report/verdict.h"

namespace cudojo {
namespace {

using namespace api_testing;
using client_testing::ClientProcess;

// tinyproxy -d (no fork), listening on 127.0.0.1 only, every request line in its log.
class Tinyproxy {
 public:
  static constexpr const char* kTinyproxy = "/usr/bin/tinyproxy";

  explicit Tinyproxy(const fs::path& folder) : folder_(folder), port_(NginxProxy::free_port()) {
    fs::create_directories(folder_);
    std::ofstream(folder_ / "tinyproxy.conf")
        << "Port " << port_ << "\nListen 127.0.0.1\nTimeout 30\nMaxClients 16\nAllow 127.0.0.1\n"
        << "LogLevel Connect\nLogFile \"" << log_path().string() << "\"\nDisableViaHeader Yes\n";
    pid_ = fork();
    if (pid_ == 0) {
      const int out = open((folder_ / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(out, 2);
      const std::string config = (folder_ / "tinyproxy.conf").string();
      execl(kTinyproxy, kTinyproxy, "-d", "-c", config.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int waited_ms = 0; waited_ms < 10'000; waited_ms += 50) {
      if (const int fd = http::connect_to_loopback(port_); fd >= 0) {
        close(fd);
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "tinyproxy did not listen within 10 s; see " << (folder_ / "stderr.txt").string();
  }
  ~Tinyproxy() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  fs::path log_path() const { return folder_ / "tinyproxy.log"; }
  // The request lines it carried, in order ("GET http://127.0.0.1:PORT/api/me HTTP/1.1").
  std::vector<std::string> requests() const {
    std::ifstream in(log_path());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);)
      if (const auto at = line.find("): "); line.find("Request (") != std::string::npos && at != line.npos)
        lines.push_back(line.substr(at + 3));
    return lines;
  }
  std::string log() const {
    std::ifstream in(log_path());
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

 private:
  fs::path folder_;
  int port_ = 0;
  pid_t pid_ = -1;
};

class ClientThroughProxy : public Api {
 protected:
  void SetUp() override {
    Api::SetUp();
    if (IsSkipped()) return;
    if (!fs::exists(Tinyproxy::kTinyproxy))
      GTEST_SKIP() << "tinyproxy is not installed (Debian's tinyproxy; scripts/setup.sh installs it)";
    if (via_nginx()) GTEST_SKIP() << "a proxy of its own; the nginx run adds nothing here";
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(front_port()); }
  // `cudojo ARGS` with the proxy variables in `env`, to its end; its exit code.
  int run(const std::vector<std::string>& args, ClientProcess::Environment env, std::string* said = nullptr,
          std::string* printed = nullptr) {
    env["XDG_CONFIG_HOME"] = (data_ / "config").string();
    ClientProcess client(args, env, data_ / "runs", args.front());
    const auto code = client.wait(120s);
    if (said) *said = client.err();
    if (printed) *printed = client.out();
    EXPECT_TRUE(code) << "still running after 120 s: " << client.err();
    return code.value_or(-1);
  }
  static bool carried(const std::vector<std::string>& requests, const std::string& line) {
    return std::find(requests.begin(), requests.end(), line) != requests.end();
  }
};

TEST_F(ClientThroughProxy, HttpProxyFromTheEnvironmentCarriesLoginSubmitAndTheVerdict) {
  start();
  Tinyproxy proxy(data_ / "proxy");
  const std::string token = sign_in("pia");
  std::string said, printed;
  ASSERT_EQ(run({"login", url()}, {{"CUDOJO_TOKEN", token}, {"http_proxy", proxy.url()}}, &said), 0) << said;
  const int code = run({"submit", "reduction/2", testing::submission("reduction-2/compile_error.cu")},
                       {{"http_proxy", proxy.url()}}, &said, &printed);
  EXPECT_EQ(code, exit_code(Verdict::kCompileError)) << said;
  EXPECT_NE(printed.find("atomicAdd(out, X[j]);"), std::string::npos) << printed;
  const std::int64_t id = client_testing::sent_job_id(said);
  ASSERT_GT(id, 0) << said;
  // Every request went to the proxy, in the absolute form a forward proxy needs.
  const auto requests = proxy.requests();
  EXPECT_TRUE(carried(requests, "GET " + url() + "/api/me HTTP/1.1")) << proxy.log();
  EXPECT_TRUE(carried(requests, "POST " + url() + "/api/jobs HTTP/1.1")) << proxy.log();
  EXPECT_TRUE(carried(requests, "GET " + url() + "/api/jobs/" + std::to_string(id) + " HTTP/1.1"))
      << proxy.log();
}

TEST_F(ClientThroughProxy, UpperCaseHttpProxyIsReadToo) {
  start({"--workers", "0"});
  Tinyproxy proxy(data_ / "proxy");
  std::string said;
  ASSERT_EQ(run({"login", url()}, {{"CUDOJO_TOKEN", sign_in("quinn")}, {"HTTP_PROXY", proxy.url()}}, &said),
            0)
      << said;
  EXPECT_TRUE(carried(proxy.requests(), "GET " + url() + "/api/me HTTP/1.1")) << proxy.log();
}

// no_proxy naming the server's host sends it straight there, in either spelling.
class NoProxy : public ClientThroughProxy, public ::testing::WithParamInterface<const char*> {};

TEST_P(NoProxy, NamingTheHostBypassesTheProxy) {
  start({"--workers", "0"});
  Tinyproxy proxy(data_ / "proxy");
  const std::string token = sign_in("remy");
  std::string said;
  ASSERT_EQ(run({"login", url()},
                {{"CUDOJO_TOKEN", token}, {"http_proxy", proxy.url()}, {GetParam(), "127.0.0.1"}}, &said),
            0)
      << said;
  EXPECT_EQ(run({"history"}, {{"http_proxy", proxy.url()}, {GetParam(), "localhost, 127.0.0.1"}}, &said), 0)
      << said;
  EXPECT_TRUE(proxy.requests().empty()) << proxy.log();
  // The same commands without no_proxy do go through it.
  EXPECT_EQ(run({"history"}, {{"http_proxy", proxy.url()}}, &said), 0) << said;
  EXPECT_EQ(proxy.requests().size(), 1u) << proxy.log();
}

INSTANTIATE_TEST_SUITE_P(EitherCase, NoProxy, ::testing::Values("no_proxy", "NO_PROXY"));

// A proxy that is not there is named in the error, so the learner knows which to check.
TEST_F(ClientThroughProxy, AProxyThatIsDownIsNamedInTheError) {
  start({"--workers", "0"});
  const std::string down = "127.0.0.1:" + std::to_string(NginxProxy::free_port());
  std::string said;
  EXPECT_EQ(
      run({"login", url()}, {{"CUDOJO_TOKEN", sign_in("sam")}, {"http_proxy", "http://" + down}}, &said),
      cli::kExitServer);
  EXPECT_NE(said.find("cannot reach " + url() + " through the proxy " + down), std::string::npos) << said;
}

}  // namespace
}  // namespace cudojo

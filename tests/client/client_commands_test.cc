// The terminal client's accounts and settings (issue #27): login by token, from the environment or
// by invite code; a refused token, a server that is not there, HTTPS with a school's own
// certificate, logout, and a servers file that is broken (client_command_fixture.h).
#include "client_command_fixture.h"

namespace cudojo::client_testing {
namespace {

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

}  // namespace
}  // namespace cudojo::client_testing

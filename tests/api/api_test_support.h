// What every API test file shares (tests/api/api_*_test.cc): the real `cudojo serve` (its own
// process, a fresh SQLite file or PostgreSQL database, a free port), nginx in front of it when the
// suite runs through the proxy, the fixture, and raw-socket helpers. No GPU is needed: jobs end as
// compile_error or no_device here, which is exactly the path the queue, the limits and the
// restarts are about.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "../e2e/run_cli.h"
#include "compile/sandbox.h"
#include "http/loopback_socket.h"
#include "serve/store.h"
#include "serve/store_test_support.h"

namespace cudojo::api_testing {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// One `cudojo serve` process; the port is read from its first line of output. Its stderr (the
// server's log) goes to `log` when one is named. `port` 0 lets it pick a free one.
class ServerProcess {
 public:
  ServerProcess(const fs::path& data_dir, const std::vector<std::string>& extra, const fs::path& log = {},
                int port = 0) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      if (!log.empty()) {
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) dup2(fd, 2);
      }
      std::vector<std::string> args = {testing::cudojo_binary(), "serve",      "--port",
                                       std::to_string(port),     "--data-dir", data_dir.string()};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    std::string seen;
    char c;
    while (seen.find('\n') == std::string::npos && read(out[0], &c, 1) == 1) seen += c;
    close(out[0]);
    const auto at = seen.find("http://127.0.0.1:");
    EXPECT_NE(at, std::string::npos) << seen;
    if (at != std::string::npos) port_ = std::stoi(seen.substr(at + 17));
  }
  ~ServerProcess() { stop(SIGTERM); }
  // A server that does not stop within 10 s is killed, so a hung server fails its test instead of
  // holding the whole run.
  void stop(int signal_number) {
    if (pid_ <= 0) return;
    kill(pid_, signal_number);
    for (int waited_ms = 0; waited_ms < 10'000; waited_ms += 50) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "the server did not stop within 10 s of signal " << signal_number;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// Debian's nginx in front of the server, configured with docs/deploy/cudojo-locations.conf (the
// configuration docs/DEPLOY.md installs), as a class deployment runs it. With
// CUDOJO_API_VIA_NGINX=1 (ctest api.via_nginx) every client() request goes through it; tests that
// speak raw sockets still test cudojo's own front door.
class NginxProxy {
 public:
  static constexpr const char* kNginx = "/usr/sbin/nginx";

  NginxProxy(const fs::path& folder, int upstream_port) : folder_(folder) {
    fs::create_directories(folder_);
    std::ifstream in(testing::source_root() / "docs" / "deploy" / "cudojo-locations.conf");
    std::string locations((std::istreambuf_iterator<char>(in)), {});
    for (std::size_t at; (at = locations.find("127.0.0.1:8080")) != std::string::npos;)
      locations.replace(at, 14, "127.0.0.1:" + std::to_string(upstream_port));
    std::ofstream(folder_ / "cudojo-locations.conf") << locations;
    port_ = free_port();
    std::ofstream conf(folder_ / "nginx.conf");
    if (geteuid() == 0) conf << "user root;\n";
    conf << "worker_processes 1;\ndaemon off;\npid " << (folder_ / "nginx.pid").string() << ";\nerror_log "
         << (folder_ / "error.log").string() << ";\nevents { worker_connections 512; }\n"
         << "http {\n  access_log off;\n  include "
         << (testing::source_root() / "docs" / "deploy" / "cudojo-http.conf").string() << ";\n";
    for (const char* temp : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"})
      conf << "  " << temp << "_temp_path " << (folder_ / temp).string() << ";\n";
    conf << "  server {\n    listen 127.0.0.1:" << port_ << ";\n    include "
         << (folder_ / "cudojo-locations.conf").string() << ";\n  }\n}\n";
    conf.close();
    pid_ = fork();
    if (pid_ == 0) {
      const std::string prefix = folder_.string(), config = (folder_ / "nginx.conf").string();
      execl(kNginx, kNginx, "-p", prefix.c_str(), "-c", config.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int waited_ms = 0; waited_ms < 10'000 && !listening(); waited_ms += 50)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(listening()) << "nginx did not start; see " << (folder_ / "error.log").string();
  }
  ~NginxProxy() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  // A loopback port nothing listens on now.
  static int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
    close(fd);
    return ntohs(address.sin_port);
  }

 private:
  bool listening() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port_));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
  }

  fs::path folder_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// CUDOJO_API_STORE=postgresql (ctest api.postgresql): every server in these tests keeps its jobs
// in a fresh PostgreSQL database on the test cluster instead of SQLite in its data folder.
inline bool on_postgres() {
  const char* value = std::getenv("CUDOJO_API_STORE");
  return value && std::string(value) == "postgresql";
}

inline constexpr const char* kSqliteOnly = "a SQLite file's own behaviour; this run uses PostgreSQL";

inline bool via_nginx() {
  const char* value = std::getenv("CUDOJO_API_VIA_NGINX");
  return value && std::string(value) == "1";
}

class Api : public ::testing::Test {
 protected:
  void SetUp() override {
    if (via_nginx() && !fs::exists(NginxProxy::kNginx))
      GTEST_SKIP() << "CUDOJO_API_VIA_NGINX=1 but nginx is not installed (scripts/setup.sh installs it)";
    data_ = fs::temp_directory_path() / ("cudojo_api_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(data_);
    if (on_postgres()) {
      const auto server = testing::postgres_test_server();
      if (!server) GTEST_SKIP() << testing::kNoPostgresReason;
      postgres_ = testing::create_postgres_database(*server);
      ASSERT_FALSE(postgres_.empty()) << "could not create a database on " << *server;
    }
  }
  void TearDown() override {
    proxy_.reset();
    server_.reset();
    fs::remove_all(data_);
    fs::remove(log_path());
    if (!postgres_.empty()) testing::drop_postgres_database(postgres_);
  }
  // The server's store: the SQLite file in its data folder, or this test's PostgreSQL database.
  std::string store_location() const {
    return postgres_.empty() ? (data_ / "cudojo.sqlite3").string() : postgres_;
  }
  void start(std::vector<std::string> extra = {"--workers", "1"}, int port = 0) {
    if (!postgres_.empty()) extra.insert(extra.end(), {"--store", postgres_});
    server_ = std::make_unique<ServerProcess>(data_, extra, log_path(), port);
    if (via_nginx()) proxy_ = std::make_unique<NginxProxy>(data_ / "nginx", server_->port());
  }
  // The server's log (its stderr), kept beside the data folder.
  fs::path log_path() const { return data_.string() + ".log"; }
  std::string server_log() const {
    std::ifstream in(log_path());
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }
  // Where clients connect: nginx when the tests run through it, else the server itself.
  int front_port() const { return proxy_ ? proxy_->port() : server_->port(); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", front_port());
    c.set_read_timeout(30, 0);
    return c;
  }
  std::string sign_in(const std::string& name) {
    auto response = client().Post("/api/learners", json{{"name", name}}.dump(), "application/json");
    EXPECT_TRUE(response);
    EXPECT_EQ(response->status, 201) << response->body;
    // get<>() copies the value out before the parsed document it lives in is destroyed.
    return json::parse(response->body)["token"].get<std::string>();
  }
  httplib::Result submit(const std::string& token, const json& body) {
    return client().Post("/api/jobs", {{"Authorization", "Bearer " + token}}, body.dump(),
                         "application/json");
  }
  json wait_done(const std::string& token, std::int64_t id) {
    for (int i = 0; i < 300; ++i) {
      auto response =
          client().Get(("/api/jobs/" + std::to_string(id)).c_str(), {{"Authorization", "Bearer " + token}});
      if (response && response->status == 200) {
        json job = json::parse(response->body);
        if (job["state"] == "done") return job;
      }
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << "job " << id << " did not finish";
    return {};
  }
  // A job queued for `token` (left queued when no judge runs), and the path of its event stream.
  std::pair<std::int64_t, std::string> queued_job(const std::string& token) {
    const auto response = submit(token, {{"stage", "reduction/2"}, {"source", "x"}});
    EXPECT_EQ(response->status, 202) << response->body;
    const auto id = json::parse(response->body)["id"].get<std::int64_t>();
    return {id, "/api/jobs/" + std::to_string(id) + "/events"};
  }
  // The learner's id, as GET /api/me gives it; 0 when it does not answer.
  std::int64_t learner_id(const std::string& token) {
    auto me = client().Get("/api/me", {{"Authorization", "Bearer " + token}});
    return me && me->status == 200 ? json::parse(me->body)["id"].get<std::int64_t>() : 0;
  }
  static std::string compile_error_source() {
    std::ifstream in(testing::submission("reduction-2/compile_error.cu"));
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path data_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<NginxProxy> proxy_;
  std::string postgres_;  // this test's database URL when on_postgres()
};

// Processes below `root` now: a process's parent is the fourth field of /proc/PID/stat.
inline std::vector<pid_t> descendants_of(pid_t root) {
  std::map<pid_t, pid_t> parent;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    parent[std::stoi(name)] = ppid;
  }
  std::vector<pid_t> found;
  for (const auto& [pid, ppid] : parent) {
    for (pid_t up = ppid; up > 1 && parent.count(up); up = parent[up]) {
      if (up == root) {
        found.push_back(pid);
        break;
      }
    }
  }
  return found;
}

// Alive: there, and not a zombie waiting for a parent that is gone.
inline bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  return close != std::string::npos && text.size() > close + 2 && text[close + 2] != 'Z';
}

// An event stream on a raw socket (with `headers`, "Name: value\r\n" lines, such as the
// Authorization), read until its first event; -1 when the server refused it.
inline int open_event_stream(int port, const std::string& path, const std::string& headers = "") {
  const int fd = http::connect_to_loopback(port);
  if (fd < 0) return -1;
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return -1;
  }
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string seen;
  char buffer[4096];
  while (seen.find("event:") == std::string::npos && seen.find("\r\n\r\n{") == std::string::npos) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    seen.append(buffer, static_cast<std::size_t>(n));
  }
  if (seen.find(" 200 ") == std::string::npos || seen.find("event:") == std::string::npos) {
    close(fd);
    return -1;
  }
  return fd;
}

inline std::string bearer(const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; }

// Everything a stream sends within `wait` (until it closes): its events, as text.
inline std::string read_stream(int fd, std::chrono::milliseconds wait) {
  std::string seen;
  const auto end = std::chrono::steady_clock::now() + wait;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, 20) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    seen.append(buffer, static_cast<std::size_t>(n));
  }
  return seen;
}

// One HTTP/1.1 request on a raw socket from the loopback address `from` (every 127.0.0.0/8
// address reaches the server, so a test can be several clients), with a JSON body when given; the
// status and body of the answer (0 and "" when there was none).
inline std::pair<int, std::string> request_from(const char* from, int port, const std::string& method,
                                                const std::string& path, const std::string& headers = "",
                                                const std::string& body = "") {
  const int fd = http::connect_to_loopback(port, from);
  if (fd < 0) return {0, ""};
  std::string request =
      method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers;
  if (!body.empty())
    request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  request += "\r\n" + body;
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  const std::string answer = read_stream(fd, 5000ms);
  close(fd);
  const auto body_at = answer.find("\r\n\r\n");
  if (answer.size() < 12 || body_at == std::string::npos) return {0, ""};
  return {std::stoi(answer.substr(9, 3)), answer.substr(body_at + 4)};
}

// Sends `head` and then up to `body_bytes` of body in 64 KiB writes on a raw socket, and returns
// what the server answered (stopping early when it closes the connection).
inline std::string raw_request(int port, const std::string& head, std::size_t body_bytes, bool chunked) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return "";
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  signal(SIGPIPE, SIG_IGN);
  bool open = send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size());
  const std::string piece(64 * 1024, '{');
  char size_line[32];
  std::snprintf(size_line, sizeof size_line, "%zx\r\n", piece.size());
  for (std::size_t sent = 0; open && sent < body_bytes; sent += piece.size()) {
    std::string chunk = chunked ? std::string(size_line) + piece + "\r\n" : piece;
    open = send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(chunk.size());
  }
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
    answer.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  return answer;
}

// `cudojo serve ARGS`, stopped after 10 s if it has not ended by itself; its exit code and output.
inline std::pair<int, std::string> serve_briefly(const std::string& arguments) {
  const std::string command = "timeout 10 " + testing::cudojo_binary() + " serve " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[512];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = pipe ? pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// A report as the judge writes it, reduced to the metrics the summaries read.
inline std::string report_with(double time_ratio, std::optional<double> baseline_ratio = std::nullopt,
                               double median_ms = 0.5) {
  json metrics = {{"time_ratio", time_ratio}, {"time_ms", {{"median", median_ms}, {"min", median_ms}}}};
  if (baseline_ratio) metrics["baseline_ratio"] = *baseline_ratio;
  return json{{"verdict", "accepted"}, {"metrics", metrics}, {"padding", std::string(4096, 'p')}}.dump();
}

}  // namespace cudojo::api_testing

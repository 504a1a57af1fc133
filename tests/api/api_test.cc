// API tests against the real `cudojo serve` (its own process, a fresh SQLite file, a free port),
// spoken to over HTTP. No GPU is needed: jobs end as compile_error or no_device here, which is
// exactly the path the queue, the limits and the restarts are about.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
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
#include "serve/store.h"
#include "serve/store_test_support.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// One `cudojo serve` process; the port is read from its first line of output.
class ServerProcess {
 public:
  ServerProcess(const fs::path& data_dir, const std::vector<std::string>& extra) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      close(out[0]);
      std::vector<std::string> args = {testing::cudojo_binary(), "serve", "--port", "0", "--data-dir",
                                       data_dir.string()};
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
         << "http {\n  access_log off;\n";
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

 private:
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
bool on_postgres() {
  const char* value = std::getenv("CUDOJO_API_STORE");
  return value && std::string(value) == "postgresql";
}

constexpr const char* kSqliteOnly = "a SQLite file's own behaviour; this run uses PostgreSQL";

bool via_nginx() {
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
    if (!postgres_.empty()) testing::drop_postgres_database(postgres_);
  }
  // The server's store: the SQLite file in its data folder, or this test's PostgreSQL database.
  std::string store_location() const {
    return postgres_.empty() ? (data_ / "cudojo.sqlite3").string() : postgres_;
  }
  void start(std::vector<std::string> extra = {"--workers", "1"}) {
    if (!postgres_.empty()) extra.insert(extra.end(), {"--store", postgres_});
    server_ = std::make_unique<ServerProcess>(data_, extra);
    if (via_nginx()) proxy_ = std::make_unique<NginxProxy>(data_ / "nginx", server_->port());
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
    return json::parse(response->body)["token"];
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
    std::set<std::string> cli_keys, server_keys;
    for (const auto& [key, value] : cli.items()) cli_keys.insert(key);
    for (const auto& [key, value] : server.items()) server_keys.insert(key);
    EXPECT_EQ(cli_keys, server_keys) << id;
    for (const auto& [key, value] : cli.items()) EXPECT_EQ(server[key], value) << id << " " << key;
    EXPECT_FALSE(cli["lesson_markdown"].get<std::string>().empty()) << id;
  }
}

TEST_F(Api, CompileErrorRoundTrip) {
  start();
  const std::string token = sign_in("ada");
  auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  ASSERT_EQ(response->status, 202) << response->body;
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  json job = wait_done(token, id);
  EXPECT_EQ(job["verdict"], "compile_error");
  EXPECT_EQ(job["report"]["verdict"], "compile_error");  // the same JSON as `cudojo check --json`
  EXPECT_EQ(job["report"]["compile"]["diagnostics"][0]["line"], 6);
  EXPECT_GT(job["queued_to_verdict_ms"].get<double>(), 0.0);
  EXPECT_EQ(job["source"], compile_error_source());  // the page opens and compares old submissions
  EXPECT_EQ(job["language"], "cuda");
  // The progress stream ends with the result.
  auto events = client().Get(("/api/jobs/" + std::to_string(id) + "/events?token=" + token).c_str());
  ASSERT_EQ(events->status, 200);
  EXPECT_NE(events->body.find("event: result"), std::string::npos);
  // History holds it, as a summary: no report, no source.
  auto history = client().Get("/api/history?stage=reduction/3", {{"Authorization", "Bearer " + token}});
  ASSERT_EQ(history->status, 200);
  const json listed = json::parse(history->body);
  EXPECT_EQ(listed["jobs"][0]["id"], id);
  EXPECT_EQ(listed["jobs"][0]["verdict"], "compile_error");
  EXPECT_FALSE(listed["jobs"][0].contains("report"));
  EXPECT_FALSE(listed["jobs"][0].contains("source"));
  EXPECT_EQ(listed["next_before"], nullptr);
}

TEST_F(Api, PythonAndRustJobsAreJudgedInTheirLanguage) {
  if (find_bubblewrap().empty()) GTEST_SKIP() << "bubblewrap is not installed (scripts/setup.sh installs it)";
  start();
  const std::string token = sign_in("ada");
  // A Python syntax error and a Rust typo: judged here without a GPU, at the learner's lines.
  const std::pair<std::string, int> cases[] = {{"python", 3}, {"rust", 2}};
  for (const auto& [language, line] : cases) {
    const std::string source = language == "python"
                                   ? "from numba import cuda\n@cuda.jit\ndef reduce(X, out, N)\n"
                                   : "#[kernel]\nfn reduce(x: *const f32, out: *mut f32, n: i32) { y }\n";
    auto response = submit(token, {{"stage", "reduction/3"}, {"source", source}, {"language", language}});
    ASSERT_EQ(response->status, 202) << response->body;
    const auto id = json::parse(response->body)["id"].get<std::int64_t>();
    json job = wait_done(token, id);
    EXPECT_EQ(job["language"], language);
    EXPECT_EQ(job["verdict"], "compile_error") << job.dump();
    EXPECT_EQ(job["report"]["language"], language);
    ASSERT_FALSE(job["report"]["compile"]["diagnostics"].empty()) << job.dump();
    EXPECT_EQ(job["report"]["compile"]["diagnostics"][0]["line"], line) << job.dump();
  }
  auto history = client().Get("/api/history?stage=reduction/3", {{"Authorization", "Bearer " + token}});
  const json jobs = json::parse(history->body)["jobs"];
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["language"], "rust");
  EXPECT_EQ(jobs[1]["language"], "python");
  // The stage offers each language's starter and signature.
  const json stage = json::parse(client().Get("/api/stages/reduction/3")->body);
  EXPECT_NE(stage["languages"]["rust"]["signature"].get<std::string>().find("fn reduce"), std::string::npos);
}

// Processes below `root` now: a process's parent is the fourth field of /proc/PID/stat.
std::vector<pid_t> descendants_of(pid_t root) {
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
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  return close != std::string::npos && text.size() > close + 2 && text[close + 2] != 'Z';
}

TEST_F(Api, AStopSignalEndsTheServerWithinFiveSecondsAndRequeuesTheRunningJob) {
  if (find_bubblewrap().empty()) GTEST_SKIP() << "bubblewrap is not installed (scripts/setup.sh installs it)";
  start();
  const std::string token = sign_in("ada");
  // A Rust compile that would run for its whole budget: macro expansion that doubles 40 times.
  const std::string bomb =
      "macro_rules! grow { () => {}; ($x:tt $($rest:tt)*) => { grow!($($rest)*); grow!($($rest)*); }; }\n"
      "grow!(a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a);\n"
      "#[kernel]\nfn reduce(x: *const f32, out: *mut f32, n: i32) {}\n";
  auto response = submit(token, {{"stage", "reduction/3"}, {"source", bomb}, {"language", "rust"}});
  ASSERT_EQ(response->status, 202) << response->body;
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  const std::string path = "/api/jobs/" + std::to_string(id);
  std::vector<pid_t> compiling;
  for (int i = 0; i < 200 && compiling.empty(); ++i) {
    std::this_thread::sleep_for(50ms);
    auto job = json::parse(client().Get(path.c_str(), {{"Authorization", "Bearer " + token}})->body);
    if (job["state"] == "running") compiling = descendants_of(server_->pid());
  }
  ASSERT_FALSE(compiling.empty()) << "the job never started compiling";
  std::this_thread::sleep_for(500ms);  // well into rustc

  const auto stop_started = std::chrono::steady_clock::now();
  server_->stop(SIGTERM);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_started).count();
  EXPECT_LT(seconds, 5.0) << "SIGTERM must end the server within 5 s";
  std::this_thread::sleep_for(300ms);
  for (const pid_t pid : compiling) EXPECT_FALSE(alive(pid)) << "process " << pid << " outlived the server";

  start({"--workers", "0"});  // the same data folder; nothing runs the job now
  auto job = json::parse(client().Get(path.c_str(), {{"Authorization", "Bearer " + token}})->body);
  EXPECT_EQ(job["state"], "queued") << job.dump();
  EXPECT_EQ(job["verdict"], nullptr);
}

TEST_F(Api, BadRequestsGetAClearError) {
  start();
  const std::string token = sign_in("ada");
  auto unknown = submit(token, {{"stage", "reduction/99"}, {"source", "x"}});
  EXPECT_EQ(unknown->status, 400);
  EXPECT_NE(json::parse(unknown->body)["error"].get<std::string>().find("reduction/99"), std::string::npos);
  auto bad_json =
      client().Post("/api/jobs", {{"Authorization", "Bearer " + token}}, "{not json", "application/json");
  EXPECT_EQ(bad_json->status, 400);
  EXPECT_EQ(submit(token, {{"stage", "reduction/3"}})->status, 400);
  auto fortran = submit(token, {{"stage", "reduction/3"}, {"source", "x"}, {"language", "fortran"}});
  EXPECT_EQ(fortran->status, 400);
  EXPECT_NE(json::parse(fortran->body)["error"].get<std::string>().find("cuda, python, rust"),
            std::string::npos);
  EXPECT_EQ(submit("not-a-token", {{"stage", "reduction/3"}, {"source", "x"}})->status, 401);
  auto two_spaces = client().Post("/api/learners", "{\"name\": \"a  b\"}", "application/json");
  EXPECT_EQ(two_spaces->status, 400);
  EXPECT_NE(json::parse(two_spaces->body)["error"].get<std::string>().find("single spaces"),
            std::string::npos);
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"ada\"}", "application/json")->status, 409);
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \" ada \"}", "application/json")->status, 409);
}

TEST_F(Api, ADatabaseFailureIsTheServersErrorNotTheRequests) {
  start();
  sign_in("ada");
  ASSERT_TRUE(testing::refuse_new_learners(store_location()));
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"bob\"}", "application/json")->status, 503);
  // The checks that come before the database still answer for the request.
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"ada\"}", "application/json")->status, 409);
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"a  b\"}", "application/json")->status, 400);
}

TEST_F(Api, OversizeSourceAndOversizeRequestAreRefused) {
  start();
  const std::string token = sign_in("ada");
  auto big_source = submit(token, {{"stage", "reduction/3"}, {"source", std::string(70 * 1024, 'x')}});
  EXPECT_EQ(big_source->status, 413);
  EXPECT_NE(json::parse(big_source->body)["error"].get<std::string>().find("limit"), std::string::npos);
  auto huge = submit(token, {{"stage", "reduction/3"}, {"source", std::string(300 * 1024, 'x')}});
  EXPECT_EQ(huge->status, 413);
  const json refused = json::parse(huge->body, nullptr, false);
  ASSERT_TRUE(refused.is_object()) << huge->body;
  EXPECT_TRUE(refused["error"].is_string());
}

TEST_F(Api, FullQueueAnswers429WithRetryAfter) {
  start({"--workers", "0", "--max-queue", "3"});
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(submit(i < 2 ? ada : bob, {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
  }
  auto refused = submit(bob, {{"stage", "reduction/2"}, {"source", "x"}});
  EXPECT_EQ(refused->status, 429);
  EXPECT_FALSE(refused->get_header_value("Retry-After").empty());
}

TEST_F(Api, OneLearnerCannotFillTheQueue) {
  start({"--workers", "0"});
  const std::string ada = sign_in("ada");
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
  EXPECT_EQ(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->status, 429);
  EXPECT_EQ(submit(sign_in("bob"), {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
}

TEST_F(Api, QueuedJobsSurviveAKilledServerAndRunOnce) {
  start({"--workers", "0"});
  const std::string token = sign_in("ada");
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
    ASSERT_EQ(response->status, 202);
    ids.push_back(json::parse(response->body)["id"]);
  }
  server_->stop(SIGKILL);  // no chance to tidy up
  start({"--workers", "1"});
  for (auto id : ids) {
    json job = wait_done(token, id);
    EXPECT_EQ(job["verdict"], "compile_error");
    EXPECT_EQ(job["attempts"], 1);
  }
}

TEST_F(Api, AJobInterruptedWhileRunningRunsAgain) {
  start({"--workers", "0"});
  const std::string token = sign_in("ada");
  auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  server_->stop(SIGTERM);
  {
    // What a server that died mid-run leaves behind: the job marked running, its lease run out.
    auto store = open_store(store_location());
    ASSERT_EQ(store->claim_next("died#1", 0)->id, id);
  }
  start({"--workers", "1"});
  json job = wait_done(token, id);
  EXPECT_EQ(job["verdict"], "compile_error");
  EXPECT_EQ(job["attempts"], 2);
}

TEST_F(Api, ConcurrentSubmissionsAllComplete) {
  start({"--workers", "2"});
  std::vector<std::string> tokens;
  for (int learner = 0; learner < 4; ++learner)
    tokens.push_back(sign_in("learner" + std::to_string(learner)));
  std::mutex mutex;
  std::vector<std::pair<std::string, std::int64_t>> jobs;
  std::vector<std::thread> threads;
  for (const auto& token : tokens) {
    threads.emplace_back([&, token] {
      for (int i = 0; i < 4; ++i) {
        auto response = submit(token, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
        ASSERT_TRUE(response);
        ASSERT_EQ(response->status, 202);
        std::lock_guard lock(mutex);
        jobs.emplace_back(token, json::parse(response->body)["id"].get<std::int64_t>());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(jobs.size(), 16u);
  std::set<std::int64_t> distinct;
  for (const auto& [token, id] : jobs) {
    distinct.insert(id);
    EXPECT_EQ(wait_done(token, id)["verdict"], "compile_error");
  }
  EXPECT_EQ(distinct.size(), 16u);
}

// An event stream on a raw socket, read until its first event; -1 when the server refused it.
int open_event_stream(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
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

TEST_F(Api, DroppedEventStreamsGiveTheirPlacesBack) {
  start({"--workers", "0"});
  const std::string ada = sign_in("ada");
  const auto id =
      json::parse(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->body)["id"].get<int>();
  const std::string path = "/api/jobs/" + std::to_string(id) + "/events?token=" + ada;
  const int cap = ServeLimits{}.max_event_streams;
  std::vector<int> streams;
  for (int i = 0; i < cap; ++i) {
    const int fd = open_event_stream(server_->port(), path);
    ASSERT_GE(fd, 0) << "stream " << i;
    streams.push_back(fd);
  }
  // Every place is taken: one more is refused, and the rest of the API still answers at once.
  EXPECT_EQ(open_event_stream(server_->port(), path), -1);
  const auto asked = std::chrono::steady_clock::now();
  auto health = client().Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 1s);
  // The clients go away without a word; their streams notice on the next heartbeat.
  for (int fd : streams) close(fd);
  int reopened = -1;
  for (int attempt = 0; attempt < 50 && reopened < 0; ++attempt) {
    std::this_thread::sleep_for(200ms);
    reopened = open_event_stream(server_->port(), path);
  }
  EXPECT_GE(reopened, 0) << "the dropped streams never gave their places back";
  if (reopened >= 0) close(reopened);
}

TEST_F(Api, AStopSignalEndsOpenEventStreams) {
  start({"--workers", "0"});
  const std::string ada = sign_in("ada");
  const auto id =
      json::parse(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->body)["id"].get<int>();
  const int stream =
      open_event_stream(server_->port(), "/api/jobs/" + std::to_string(id) + "/events?token=" + ada);
  ASSERT_GE(stream, 0);
  const auto asked = std::chrono::steady_clock::now();
  server_->stop(SIGTERM);  // fails the test when the server is still up 10 s later
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 5s);
  close(stream);
}

// Sends `head` and then up to `body_bytes` of body in 64 KiB writes on a raw socket, and returns
// what the server answered (stopping early when it closes the connection).
std::string raw_request(int port, const std::string& head, std::size_t body_bytes, bool chunked) {
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

TEST_F(Api, TheFrontDoorRefusesWhatItCannotBound) {
  start({"--workers", "0"});
  // A chunked body of 300 MB would pass a Content-Length limit; it is refused before it is read.
  const auto started = std::chrono::steady_clock::now();
  const std::string chunked = raw_request(server_->port(),
                                          "POST /api/learners HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                          "application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                                          300u << 20, true);
  EXPECT_NE(chunked.find(" 411 "), std::string::npos) << chunked.substr(0, 200);
  EXPECT_NE(chunked.find("\"error\""), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);

  // JSON routes take JSON only: a form or text/plain POST is what another site's page can send.
  auto form = client().Post("/api/learners", "name=mallory", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  EXPECT_NE(form->body.find("application/json"), std::string::npos);

  // Unknown routes and oversize bodies answer JSON too, and every answer carries the headers.
  auto missing = client().Get("/api/nothing-here");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"], "no such route");
  for (const char* path : {"/api/nothing-here", "/api/health", "/index.html"}) {
    auto response = client().Get(path);
    ASSERT_TRUE(response) << path;
    EXPECT_EQ(response->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_NE(response->get_header_value("Content-Security-Policy").find("frame-ancestors 'none'"),
              std::string::npos)
        << path;
    EXPECT_FALSE(response->has_header("EXCEPTION_WHAT")) << path;
  }
  auto oversize = client().Post("/api/learners", std::string(ServeLimits{}.max_request_bytes + 1, ' '),
                                "application/json");
  ASSERT_TRUE(oversize);
  EXPECT_EQ(oversize->status, 413);
  EXPECT_TRUE(json::parse(oversize->body, nullptr, false).contains("error")) << oversize->body;
}

// `cudojo serve ARGS`, stopped after 10 s if it has not ended by itself; its exit code and output.
std::pair<int, std::string> serve_briefly(const std::string& arguments) {
  const std::string command = "timeout 10 " + testing::cudojo_binary() + " serve " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buffer[512];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = pipe ? pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(Api, OneServerPerDataFolderAndNoneOnATakenPort) {
  if (on_postgres()) GTEST_SKIP() << kSqliteOnly;
  start({"--workers", "0"});
  const auto [code, out] = serve_briefly("--port 0 --workers 0 --data-dir " + data_.string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("another cudojo serve is using"), std::string::npos) << out;

  const auto other = data_.string() + "-other";
  const auto [taken_code, taken_out] =
      serve_briefly("--port " + std::to_string(server_->port()) + " --workers 0 --data-dir " + other);
  fs::remove_all(other);
  EXPECT_EQ(taken_code, 2) << taken_out;
  EXPECT_NE(taken_out.find("is in use"), std::string::npos) << taken_out;
  // The first server is untouched.
  auto health = client().Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(Api, OneAddressCannotCreateLearnersWithoutLimit) {
  start({"--workers", "0"});
  const int limit = ServeLimits{}.max_new_learners_per_address_per_hour;
  for (int i = 0; i < limit; ++i) sign_in("learner" + std::to_string(i));
  auto refused = client().Post("/api/learners", json{{"name", "one-too-many"}}.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_FALSE(refused->get_header_value("Retry-After").empty());
  EXPECT_NE(json::parse(refused->body)["error"].get<std::string>().find("last hour"), std::string::npos);
}

TEST_F(Api, SlowAndIdleClientsDoNotDelayOthers) {
  start({"--workers", "0"});
  auto connected = [&] {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(server_->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  };
  std::vector<int> held;
  // Eight that trickle a header line now and then, eight that finished one request and stay open.
  for (int i = 0; i < 8; ++i) {
    const int slow = connected();
    const std::string start_of_request = "GET /api/health HTTP/1.1\r\nHost: x\r\n";
    EXPECT_GT(write(slow, start_of_request.data(), start_of_request.size()), 0);
    held.push_back(slow);
    const int idle = connected();
    const std::string request = "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n";
    EXPECT_GT(write(idle, request.data(), request.size()), 0);
    char buffer[1024];
    EXPECT_GT(read(idle, buffer, sizeof buffer), 0);
    held.push_back(idle);
  }
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 16; i += 2) EXPECT_GT(write(held[i], "X-Slow: 1\r\n", 11), 0);
    const auto asked = std::chrono::steady_clock::now();
    auto health = client().Get("/api/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 500ms) << "round " << round;
    std::this_thread::sleep_for(200ms);
  }
  for (int fd : held) close(fd);
}

TEST_F(Api, ADatabaseDeletedUnderTheServerIsReportedAndNothingMoreIsAcknowledged) {
  if (on_postgres()) GTEST_SKIP() << kSqliteOnly;
  start({"--workers", "0"});
  const std::string ada = sign_in("ada");
  auto healthy = client().Get("/api/health");
  ASSERT_TRUE(healthy);
  EXPECT_EQ(json::parse(healthy->body)["database"], "ok");
  for (const char* suffix : {"", "-wal", "-shm"})
    fs::remove(data_ / (std::string("cudojo.sqlite3") + suffix));
  auto health = client().Get("/api/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(json::parse(health->body)["ok"], false);
  auto job = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}});
  ASSERT_TRUE(job);
  EXPECT_EQ(job->status, 503) << job->body;
  EXPECT_NE(json::parse(job->body)["error"].get<std::string>().find("gone"), std::string::npos);
}

TEST_F(Api, ACorruptDatabaseIsRefusedAtStart) {
  if (on_postgres()) GTEST_SKIP() << kSqliteOnly;
  fs::create_directories(data_);
  { std::ofstream(data_ / "cudojo.sqlite3") << std::string(4096, 'x'); }
  const auto [code, out] = serve_briefly("--port 0 --workers 0 --data-dir " + data_.string());
  EXPECT_EQ(code, 2) << out;
  EXPECT_EQ(out.find("listening"), std::string::npos);
  EXPECT_NE(out.find("cudojo.sqlite3"), std::string::npos) << out;
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

// A client that lost the answer sends the same submission with the same Idempotency-Key again and
// gets the job it queued, never a second one.
TEST_F(Api, ASubmissionSentTwiceWithItsKeyIsQueuedOnce) {
  start({"--workers", "0"});
  const std::string token = sign_in("ada");
  const json body = {{"stage", "reduction/3"}, {"source", compile_error_source()}};
  auto post = [&](const std::string& key, const json& payload) {
    return client().Post("/api/jobs", {{"Authorization", "Bearer " + token}, {"Idempotency-Key", key}},
                         payload.dump(), "application/json");
  };
  auto first = post("3f1c9a52-run-1", body);
  ASSERT_EQ(first->status, 202) << first->body;
  auto again = post("3f1c9a52-run-1", body);
  ASSERT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(json::parse(again->body)["id"], json::parse(first->body)["id"]);
  EXPECT_EQ(json::parse(again->body)["replayed"], true);
  EXPECT_EQ(again->get_header_value("Location"), first->get_header_value("Location"));
  json changed = body;
  changed["source"] = "__global__ void other() {}";
  auto reused = post("3f1c9a52-run-1", changed);
  EXPECT_EQ(reused->status, 422) << reused->body;
  EXPECT_EQ(post("has space", body)->status, 400);
  // A NUL in the source is refused on either store, never stored cut short.
  json with_nul = body;
  with_nul["source"] = std::string("__global__ void k() {}\0 hidden", 30);
  auto nul = post("another-key", with_nul);
  EXPECT_EQ(nul->status, 400) << nul->body;
  EXPECT_EQ(post(std::string(101, 'k'), body)->status, 400);
  auto history = client().Get("/api/history", {{"Authorization", "Bearer " + token}});
  EXPECT_EQ(json::parse(history->body)["jobs"].size(), 1u);
}

TEST_F(Api, AJobIsVisibleOnlyToItsLearner) {
  start();
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  auto response = submit(ada, {{"stage", "reduction/3"}, {"source", compile_error_source()}});
  const std::string path =
      "/api/jobs/" + std::to_string(json::parse(response->body)["id"].get<std::int64_t>());
  EXPECT_EQ(client().Get(path.c_str(), {{"Authorization", "Bearer " + bob}})->status, 404);
  EXPECT_EQ(client().Get(path.c_str())->status, 401);
  EXPECT_EQ(client().Get("/api/jobs/abc", {{"Authorization", "Bearer " + ada}})->status, 404);
}

TEST_F(Api, ThePageIsServed) {
  start();
  auto page = client().Get("/index.html");
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("cudojo"), std::string::npos);
  EXPECT_EQ(client().Get("/app.js")->status, 200);
}

// The signed-in learner: GET /api/me says who a token is (401 for a stale one), PUT /api/me opts in
// to or out of the leaderboards.
TEST_F(Api, MeNamesTheTokensLearnerAndTakesTheLeaderboardChoice) {
  start();
  auto created = client().Post("/api/learners", R"({"name": "  Ada Lovelace "})", "application/json");
  ASSERT_EQ(created->status, 201) << created->body;
  const json issued = json::parse(created->body);
  EXPECT_EQ(issued["name"], "Ada Lovelace");
  const httplib::Headers auth = {{"Authorization", "Bearer " + issued["token"].get<std::string>()}};
  auto me = client().Get("/api/me", auth);
  ASSERT_EQ(me->status, 200);
  EXPECT_EQ(json::parse(me->body),
            json({{"id", issued["id"]}, {"name", "Ada Lovelace"}, {"leaderboard", false}}));
  auto stale = client().Get("/api/me", {{"Authorization", "Bearer 0123"}});
  EXPECT_EQ(stale->status, 401);
  EXPECT_TRUE(json::parse(stale->body)["error"].is_string());
  EXPECT_EQ(client().Get("/api/me")->status, 401);

  auto opted_in = client().Put("/api/me", auth, R"({"leaderboard": true})", "application/json");
  ASSERT_EQ(opted_in->status, 200) << opted_in->body;
  EXPECT_EQ(json::parse(opted_in->body)["leaderboard"], true);
  EXPECT_EQ(json::parse(opted_in->body)["name"], "Ada Lovelace");
  EXPECT_EQ(json::parse(client().Get("/api/me", auth)->body)["leaderboard"], true);
  EXPECT_EQ(client().Put("/api/me", auth, R"({"leaderboard": "yes"})", "application/json")->status, 400);
  EXPECT_EQ(client().Put("/api/me", auth, "[]", "application/json")->status, 400);
  EXPECT_EQ(client().Put("/api/me", R"({"leaderboard": false})", "application/json")->status, 401);
  auto opted_out = client().Put("/api/me", auth, R"({"leaderboard": false})", "application/json");
  EXPECT_EQ(json::parse(opted_out->body)["leaderboard"], false);
}

// A report as the judge writes it, reduced to the metrics the summaries read.
std::string report_with(double time_ratio, std::optional<double> baseline_ratio = std::nullopt,
                        double median_ms = 0.5) {
  json metrics = {{"time_ratio", time_ratio}, {"time_ms", {{"median", median_ms}, {"min", median_ms}}}};
  if (baseline_ratio) metrics["baseline_ratio"] = *baseline_ratio;
  return json{{"verdict", "accepted"}, {"metrics", metrics}, {"padding", std::string(4096, 'p')}}.dump();
}

TEST_F(Api, HistoryPagesNewestFirstWithSummariesOnly) {
  start({"--workers", "0"});
  const std::string token = sign_in("ada");
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  const auto ada = learner_id(token);
  ASSERT_GT(ada, 0);
  const std::string database = store_location();
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 24; ++i) {
    ids.push_back(testing::insert_finished_job(database, ada, i % 2 ? "reduction/3" : "reduction/2",
                                               "accepted", report_with(1.0 + i, 0.5)));
    ASSERT_GT(ids.back(), 0);
  }
  // Another learner's jobs never show.
  ASSERT_GT(testing::insert_finished_job(database, learner_id(sign_in("bob")), "reduction/3", "accepted",
                                         report_with(1.0)),
            0);

  auto first = client().Get("/api/history", auth);
  ASSERT_EQ(first->status, 200);
  const json page = json::parse(first->body);
  ASSERT_EQ(page["jobs"].size(), 20u);  // the default page
  EXPECT_EQ(page["jobs"][0]["id"], ids[23]);
  EXPECT_EQ(page["next_before"], page["jobs"][19]["id"]);
  std::set<std::string> keys;
  for (const auto& [key, value] : page["jobs"][0].items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"id", "stage", "language", "state", "verdict", "time_ratio",
                                         "baseline_ratio", "created_at", "finished_at"}));
  EXPECT_EQ(page["jobs"][0]["time_ratio"], 24.0);
  EXPECT_EQ(page["jobs"][0]["baseline_ratio"], 0.5);
  EXPECT_EQ(page["jobs"][0]["state"], "done");
  EXPECT_LT(first->body.size(), 20u * 400);  // summaries, not 4 KB reports

  // Following the cursor walks the rest, then ends.
  const std::string next =
      "/api/history?limit=3&before=" + std::to_string(page["next_before"].get<std::int64_t>());
  const json second = json::parse(client().Get(next.c_str(), auth)->body);
  ASSERT_EQ(second["jobs"].size(), 3u);
  EXPECT_EQ(second["jobs"][0]["id"], ids[3]);
  EXPECT_EQ(second["next_before"], ids[1]);
  const std::string last = "/api/history?limit=3&before=" + std::to_string(ids[1]);
  const json third = json::parse(client().Get(last.c_str(), auth)->body);
  ASSERT_EQ(third["jobs"].size(), 1u);
  EXPECT_EQ(third["jobs"][0]["id"], ids[0]);
  EXPECT_EQ(third["next_before"], nullptr);

  // The stage filter takes aliases; the cursor works with it.
  const json staged =
      json::parse(client().Get("/api/history?stage=reduction/block-tree&limit=2", auth)->body);
  ASSERT_EQ(staged["jobs"].size(), 2u);
  EXPECT_EQ(staged["jobs"][1]["id"], ids[21]);
  EXPECT_EQ(staged["next_before"], ids[21]);
  EXPECT_EQ(json::parse(client().Get("/api/history?limit=1000", auth)->body)["jobs"].size(),
            24u);  // capped at 100
  for (const char* bad : {"/api/history?limit=0", "/api/history?limit=x", "/api/history?before=-3",
                          "/api/history?stage=reduction/99"}) {
    auto refused = client().Get(bad, auth);
    EXPECT_EQ(refused->status, 400) << bad;
    EXPECT_TRUE(json::parse(refused->body)["error"].is_string()) << bad;
  }
  EXPECT_EQ(client().Get("/api/history")->status, 401);
}

TEST_F(Api, ProgressIsAttemptedAfterACompileErrorAndAcceptedAfterAnAcceptedJob) {
  start();
  const std::string token = sign_in("ada");
  const httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  EXPECT_EQ(json::parse(client().Get("/api/progress", auth)->body), json({{"stages", json::object()}}));
  auto response = submit(token, {{"stage", "reduction/block-tree"}, {"source", compile_error_source()}});
  ASSERT_EQ(response->status, 202) << response->body;
  const auto id = json::parse(response->body)["id"].get<std::int64_t>();
  wait_done(token, id);
  auto progress = client().Get("/api/progress", auth);
  ASSERT_EQ(progress->status, 200);
  json stages = json::parse(progress->body)["stages"];
  ASSERT_EQ(stages.size(), 1u) << stages;
  EXPECT_EQ(stages["reduction/3"], json({{"status", "attempted"},
                                         {"attempts", 1},
                                         {"best_time_ratio", nullptr},
                                         {"best_time_ms", nullptr},
                                         {"last_job", id}}));

  // An accepted job (written as a GPU judge would have) makes the stage accepted, with its numbers.
  const auto accepted = testing::insert_finished_job(store_location(), learner_id(token), "reduction/3",
                                                     "accepted", report_with(1.25, std::nullopt, 0.04));
  ASSERT_GT(accepted, 0);
  stages = json::parse(client().Get("/api/progress", auth)->body)["stages"];
  EXPECT_EQ(stages["reduction/3"]["status"], "accepted");
  EXPECT_EQ(stages["reduction/3"]["attempts"], 2);
  EXPECT_EQ(stages["reduction/3"]["best_time_ratio"], 1.25);
  EXPECT_EQ(stages["reduction/3"]["best_time_ms"], 0.04);
  EXPECT_EQ(stages["reduction/3"]["last_job"], accepted);
  EXPECT_EQ(client().Get("/api/progress")->status, 401);
  EXPECT_EQ(client().Get("/api/progress", {{"Authorization", "Bearer nope"}})->status, 401);
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

TEST_F(Api, ThePagesOtherFilesAndVendorFoldersAreServed) {
  // A web folder of its own, so the test does not depend on what web/ holds today.
  const fs::path web = data_ / "web";
  fs::create_directories(web / "diagrams");
  fs::create_directories(web / "node_modules" / "katex" / "dist" / "fonts");
  fs::create_directories(web / "node_modules" / "diff" / "dist");
  std::ofstream(web / "index.html") << "<!doctype html><title>cudojo</title>";
  std::ofstream(web / "favicon.svg") << "<svg xmlns='http://www.w3.org/2000/svg'/>";
  std::ofstream(web / "lesson.js") << "export const lesson = 1;";
  std::ofstream(web / "lesson.css") << ".lesson {}";
  std::ofstream(web / "diagrams" / "tree-1.svg") << "<svg id='tree'/>";
  std::ofstream(web / "node_modules" / "katex" / "dist" / "katex.min.css") << ".katex {}";
  std::ofstream(web / "node_modules" / "katex" / "dist" / "fonts" / "KaTeX_Main-Regular.woff2") << "font";
  std::ofstream(web / "node_modules" / "diff" / "dist" / "diff.min.js") << "var Diff;";
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
  // Missing files and names that could leave the folder are JSON 404s, and the server goes on.
  for (const char* missing : {"/diagrams/none.svg", "/diagrams/../favicon.svg", "/diagrams/.hidden.svg",
                              "/diagrams/x.txt", "/app.js", "/vendor/highlight/highlight.min.js"}) {
    auto response = client().Get(missing);
    EXPECT_EQ(response->status, 404) << missing;
    EXPECT_TRUE(json::parse(response->body, nullptr, false).is_object()) << missing << ": " << response->body;
  }
  EXPECT_EQ(client().Get("/api/health")->status, 200);
  // The npm folders that are there are served read-only; the page's policy lets their fonts load.
  auto katex = client().Get("/vendor/katex/katex.min.css");
  ASSERT_EQ(katex->status, 200);
  EXPECT_EQ(katex->body, ".katex {}");
  EXPECT_EQ(client().Get("/vendor/katex/fonts/KaTeX_Main-Regular.woff2")->status, 200);
  EXPECT_EQ(client().Get("/vendor/diff/diff.min.js")->status, 200);
  const std::string policy = katex->get_header_value("Content-Security-Policy");
  EXPECT_NE(policy.find("font-src 'self'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("style-src 'self' 'unsafe-inline'"), std::string::npos) << policy;
  EXPECT_EQ(client().Put("/vendor/katex/katex.min.css", "x", "text/css")->status, 404);
}

}  // namespace
}  // namespace cudojo

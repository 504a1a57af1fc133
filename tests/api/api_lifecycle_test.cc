// The server's life and its store's: stopping, restarting, a killed server, a database that
// fails, is deleted or is corrupt.
#include "api_test_support.h"

namespace cudojo::api_testing {
namespace {

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

TEST_F(Api, ADatabaseFailureIsTheServersErrorNotTheRequests) {
  start();
  sign_in("ada");
  ASSERT_TRUE(testing::refuse_new_learners(store_location()));
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"bob\"}", "application/json")->status, 503);
  // The checks that come before the database still answer for the request.
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"ada\"}", "application/json")->status, 409);
  EXPECT_EQ(client().Post("/api/learners", "{\"name\": \"a  b\"}", "application/json")->status, 400);
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

// The server closed its streams' connections itself, so their sockets sit in TIME-WAIT on its port
// for a minute; a restart (systemctl restart) must still get the port at once.
TEST_F(Api, ARestartRightAfterOpenStreamsKeepsItsPort) {
  if (on_postgres()) GTEST_SKIP() << kSqliteOnly;  // the second server opens the same SQLite file
  start({"--workers", "0"});
  const int port = server_->port();
  const std::string ada = sign_in("ada");
  const auto [id, path] = queued_job(ada);
  std::vector<int> streams;
  for (int i = 0; i < 3; ++i) streams.push_back(open_event_stream(port, path, bearer(ada)));
  server_->stop(SIGTERM);
  for (int fd : streams) close(fd);
  server_ =
      std::make_unique<ServerProcess>(data_, std::vector<std::string>{"--workers", "0"}, log_path(), port);
  EXPECT_EQ(server_->port(), port);
  EXPECT_EQ(request_from("127.0.0.1", port, "GET", "/api/health").first, 200);
}

// A full disk: the learner gets the fixed sentence (nothing of SQLite's), the log gets the real
// cause, /api/health says the store is failing until a write succeeds again. The database lives on
// a small tmpfs of its own (nginx's files, in the data folder, do not), which needs root.
class FullDisk : public Api {
 protected:
  void SetUp() override {
    Api::SetUp();
    if (IsSkipped()) return;
    if (on_postgres()) GTEST_SKIP() << kSqliteOnly;
    if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs for the data folder needs root";
    fs::create_directories(disk());
    const std::string mount = "mount -t tmpfs -o size=1536k tmpfs " + disk().string() + " 2>&1";
    if (std::system(mount.c_str()) != 0) GTEST_SKIP() << "cannot mount a tmpfs here (" << mount << ")";
    mounted_ = true;
  }
  void TearDown() override {
    proxy_.reset();
    server_.reset();
    if (mounted_ && std::system(("umount " + disk().string()).c_str()) != 0) ADD_FAILURE() << "umount failed";
    Api::TearDown();
  }
  fs::path disk() const { return data_ / "disk"; }
  // Fills what is left of the disk with one file.
  void fill_disk() {
    std::ofstream filler(disk() / "filler", std::ios::binary);
    const std::string block(64 * 1024, 'f');
    for (int i = 0; i < 100 && filler; ++i)
      filler.write(block.data(), static_cast<std::streamsize>(block.size()));
  }
  bool mounted_ = false;
};

TEST_F(FullDisk, TheLearnerGetsAFixedSentenceTheLogTheCauseAndHealthSaysFailingUntilAWriteSucceeds) {
  start({"--workers", "0", "--store", (disk() / "cudojo.sqlite3").string(), "--limit",
         "max_pending_per_learner=1000", "--limit", "max_pending_per_address=1000"});
  const std::string ada = sign_in("ada");
  ASSERT_EQ(submit(ada, {{"stage", "reduction/2"}, {"source", "x"}})->status, 202);
  fill_disk();
  // Sources large enough that each needs new pages in the database's journal.
  int status = 0;
  std::string body;
  std::string retry_after;
  for (int i = 0; i < 40 && (status == 0 || status == 202); ++i) {
    auto answer = submit(ada, {{"stage", "reduction/2"}, {"source", std::string(60'000, 'a' + i % 26)}});
    ASSERT_TRUE(answer);
    status = answer->status;
    body = answer->body;
    retry_after = answer->get_header_value("Retry-After");
  }
  ASSERT_EQ(status, 503) << body;
  EXPECT_FALSE(retry_after.empty());
  const std::string sentence = json::parse(body)["error"].get<std::string>();
  for (const char* internal : {"SQL", "sqlite", "disk is full", "ROLLBACK", "/"})
    EXPECT_EQ(sentence.find(internal), std::string::npos) << internal << " in: " << sentence;
  EXPECT_NE(server_log().find("database or disk is full"), std::string::npos) << server_log();
  auto failing = client().Get("/api/health");
  ASSERT_TRUE(failing);
  EXPECT_EQ(failing->status, 503) << failing->body;
  const json health = json::parse(failing->body);
  EXPECT_EQ(health["ok"], false);
  EXPECT_EQ(health["database"], "failing");
  EXPECT_TRUE(health["failing_since"].is_number());
  // Room again: the next write succeeds, and health with it.
  fs::remove(disk() / "filler");
  auto accepted = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}});
  ASSERT_TRUE(accepted);
  EXPECT_EQ(accepted->status, 202) << accepted->body;
  auto healthy = client().Get("/api/health");
  EXPECT_EQ(healthy->status, 200) << healthy->body;
}

}  // namespace
}  // namespace cudojo::api_testing

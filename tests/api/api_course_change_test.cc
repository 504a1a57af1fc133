// The course changed under a running server: reloaded without a restart (SIGHUP or an
// administrator's call), a broken course refused while the loaded one keeps serving; no route ever
// sends a learner a reference source; and a restart while a client holds an event stream starts at
// once on the same port.
#include <csignal>
#include <fstream>
#include <regex>

#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

namespace fs = std::filesystem;

// A copy of the shipped course in a folder of the test's own, served through CUDOJO_COURSE.
class CourseChange : public ClassApi {
 protected:
  void SetUp() override {
    ClassApi::SetUp();
    if (IsSkipped()) return;
    course_ = fs::temp_directory_path() / ("cudojo-course-change-" + std::to_string(getpid()));
    fs::remove_all(course_);
    fs::copy(testing::source_root() / "course", course_, fs::copy_options::recursive);
    setenv("CUDOJO_COURSE", course_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("CUDOJO_COURSE");
    ClassApi::TearDown();
    fs::remove_all(course_);
  }
  void rewrite(const fs::path& file, const std::string& from, const std::string& to) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << file << " lacks " << from;
    text.replace(at, from.size(), to);
    std::ofstream(file) << text;
  }
  std::string version_of(const std::string& token, const std::string& stage) {
    const Answer versions = ask("GET", "/api/course/versions", token);
    if (versions.status != 200) ADD_FAILURE() << versions.status << " " << versions.text;
    for (const json& shown : versions.body["stages"])
      if (shown["stage"] == stage) return shown["current"].get<std::string>();
    return "";
  }
  fs::path course_;
};

TEST_F(CourseChange, ACourseReloadsWithoutARestartAndABrokenOneIsRefused) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const std::string learner = sign_in("ada");
  const std::string before = version_of(admin, "reduction/3");
  ASSERT_EQ(before.size(), 16u);
  EXPECT_EQ(ask("POST", "/api/course/reload", learner, std::string("{}")).status, 403);
  EXPECT_EQ(ask("GET", "/api/course/versions", learner).status, 403);

  // The gate tightened: a reload takes it, and names the stage whose version changed.
  const fs::path stage = course_ / "reduction" / "03-block-tree" / "stage.toml";
  rewrite(stage, "max_time_ratio = 2.0", "max_time_ratio = 1.5");
  const Answer reloaded = ask("POST", "/api/course/reload", admin, std::string("{}"));
  ASSERT_EQ(reloaded.status, 200) << reloaded.text;
  EXPECT_EQ(reloaded.body["replaced"], true);
  EXPECT_EQ(reloaded.body["changed"], json::array({"reduction/3"}));
  const std::string after = version_of(admin, "reduction/3");
  EXPECT_NE(after, before);
  EXPECT_NE(ask("GET", "/api/stages/reduction/3", learner).text.find("1.5"), std::string::npos)
      << "the stage page still shows the old gate";

  // A key mistyped: refused with the file and line, and the course in use stays.
  rewrite(stage, "runs = 5", "rnus = 5");
  const Answer refused = ask("POST", "/api/course/reload", admin, std::string("{}"));
  EXPECT_EQ(refused.status, 422) << refused.text;
  EXPECT_EQ(refused.body["replaced"], false);
  ASSERT_FALSE(refused.body["problems"].empty());
  EXPECT_NE(refused.body["problems"][0].get<std::string>().find("stage.toml"), std::string::npos);
  EXPECT_EQ(version_of(admin, "reduction/3"), after);
  EXPECT_EQ(ask("GET", "/api/stages/reduction/3", learner).status, 200);

  // Fixed again, and reloaded by SIGHUP, as `systemctl reload` sends it.
  rewrite(stage, "rnus = 5", "runs = 5");
  rewrite(stage, "max_time_ratio = 1.5", "max_time_ratio = 2.0");
  kill(server_->pid(), SIGHUP);
  for (int i = 0; i < 100 && version_of(admin, "reduction/3") != before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(version_of(admin, "reduction/3"), before) << server_log();
  std::string actions;
  const Answer audit = ask("GET", "/api/audit", admin);
  ASSERT_EQ(audit.status, 200) << audit.text;
  for (const json& entry : audit.body["entries"]) actions += entry["action"].get<std::string>() + " ";
  EXPECT_NE(actions.find("course.reload"), std::string::npos) << actions << server_log();
}

// Distinctive lines of every reference (long ones that the starter of the same stage lacks): none
// may appear in anything a learner or an anonymous visitor can fetch.
TEST_F(CourseChange, NoRouteSendsALearnerAReferenceSource) {
  start({"--workers", "0"});
  const std::string learner = sign_in("ada");
  // What a learner may read anyway: every starter, lesson and language note of the course. A
  // reference's line is a secret only when none of those holds it (idioms such as a thread index
  // are common to both).
  std::string public_text;
  std::vector<fs::path> references;
  for (const auto& entry : fs::recursive_directory_iterator(course_)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (name.starts_with("reference.")) {
      references.push_back(entry.path());
      continue;
    }
    std::ifstream in(entry.path());
    public_text.append(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::string> secrets;
  std::vector<std::string> stages;
  for (const fs::path& reference : references) {
    std::ifstream in(reference);
    std::string line;
    while (std::getline(in, line)) {
      line = std::regex_replace(line, std::regex("^\\s+|\\s+$"), "");
      if (line.size() >= 30 && public_text.find(line) == std::string::npos && !line.starts_with("//") &&
          !line.starts_with("#"))
        secrets.push_back(line);
    }
  }
  ASSERT_GT(secrets.size(), 50u);
  const Answer list = ask("GET", "/api/stages", learner);
  ASSERT_EQ(list.status, 200);
  for (const json& stage : list.body) stages.push_back(stage["id"].get<std::string>());
  ASSERT_EQ(stages.size(), 12u);
  const Answer job = ask("POST", "/api/jobs", learner, json{{"stage", "reduction/3"}, {"source", "x"}});
  std::vector<std::string> paths = {"/api/stages",   "/api/me",     "/api/history",
                                    "/api/progress", "/api/drafts", "/api/health",
                                    "/api/nodes",    "/index.html", "/api/jobs/" + job.body["id"].dump()};
  for (const std::string& stage : stages) {
    for (const char* language : {"", "?lang=python", "?lang=rust"})
      paths.push_back("/api/stages/" + stage + language);
    paths.push_back("/api/stages/" + stage + "/leaderboard");
  }
  for (const std::string& path : paths) {
    for (const std::string& token : {learner, std::string()}) {
      const Answer answer = ask("GET", path, token);
      for (const std::string& secret : secrets)
        EXPECT_EQ(answer.text.find(secret), std::string::npos)
            << path << " sent a reference's line: " << secret;
    }
  }
}

TEST_F(CourseChange, ARestartWhileAClientHoldsAStreamStartsAtOnceOnTheSamePort) {
  start({"--workers", "0"});
  const int port = server_->port();
  const std::string learner = sign_in("ada");
  const auto [id, events] = queued_job(learner);
  // A client holds the job's event stream open.
  httplib::Client holder("127.0.0.1", port);
  holder.set_read_timeout(30, 0);
  std::atomic<bool> streaming{false};
  std::thread reader([&] {
    holder.Get(events.c_str(), {{"Authorization", "Bearer " + learner}}, [&](const char*, size_t) {
      streaming = true;
      return true;
    });
  });
  for (int i = 0; i < 100 && !streaming; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(streaming) << "the stream did not open";
  server_->stop(SIGTERM);
  // The old server's connections linger in TIME_WAIT; the new one binds the same port at once.
  const auto started = std::chrono::steady_clock::now();
  start({"--workers", "0"}, port);
  EXPECT_EQ(server_->port(), port) << server_log();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(ask("GET", "/api/jobs/" + std::to_string(id), learner).status, 200);
  reader.join();
}

}  // namespace
}  // namespace cudojo::api_testing

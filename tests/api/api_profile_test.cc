// Profiled jobs (issue #28): POST /api/jobs takes "profile" (true or false, nothing else), the job
// keeps it and shows it with whether an Nsight Compute report is kept, and GET
// /api/jobs/{id}/ncu-report gives that report to whoever may read the job: its learner, the staff
// of the learner's class, an administrator; 404 to anyone else, 401 to nobody.
//
// A report exists only where a GPU judged a kernel that passed: without one, the tests write the
// finished job and its report into the store as a GPU machine's judge would have left them
// (insert_finished_job), and the one test that needs the judge itself skips.
#include "api_class_support.h"

namespace cudojo::api_testing {
namespace {

// What a kept report looks like to the store: bytes of every value, NULs included.
std::string report_bytes() {
  std::string bytes("NVIDIA Nsight Compute\0report", 28);
  for (int i = 0; i < 600; ++i) bytes += static_cast<char>(i % 256);
  return bytes;
}

// A report of a passing kernel with its hot spots, as the judge writes it.
std::string report_with_hot_spots() {
  json report = json::parse(report_with(1.1));
  report["hot_spots"] = {{"lines",
                          {{{"line", 7},
                            {"text", "sum += in[i];"},
                            {"samples", 90},
                            {"share", 0.9},
                            {"instructions", 4096},
                            {"stall", "long_scoreboard"},
                            {"stall_words", "waiting for global memory (long scoreboard)"},
                            {"stall_share", 0.8}}}},
                         {"samples", 100},
                         {"drain_samples", 0},
                         {"note", ""},
                         {"ms", 2400}};
  return report.dump();
}

class Profile : public ClassApi {
 protected:
  // Stores `bytes` as the job's Nsight Compute report, straight into the store's table.
  void keep_report(std::int64_t job, const std::string& bytes) {
    std::string hex;
    for (const unsigned char c : bytes) {
      hex += "0123456789abcdef"[c >> 4];
      hex += "0123456789abcdef"[c & 15];
    }
    const std::string value = on_postgres() ? "decode('" + hex + "', 'hex')" : "X'" + hex + "'";
    ASSERT_EQ(testing::sql_value(store_location(),
                                 "INSERT INTO ncu_reports (job_id, bytes, report, kept_at) VALUES (" +
                                     std::to_string(job) + ", " + std::to_string(bytes.size()) + ", " +
                                     value + ", 0)"),
              "");
  }
  static std::string report_path(std::int64_t job) {
    return "/api/jobs/" + std::to_string(job) + "/ncu-report";
  }
};

TEST_F(Profile, AServerWithProfilingOffRefusesAProfiledJobAndSaysSo) {
  start({"--workers", "0", "--no-profiling"});
  const std::string ada = sign_in("ada");
  const auto refused = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}, {"profile", true}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  EXPECT_NE(refused->body.find("--no-profiling"), std::string::npos) << refused->body;
  const auto plain = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}, {"profile", false}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 202) << plain->body;
  EXPECT_EQ(ask("GET", "/api/health", "").body.value("profiling", true), false);
}

TEST_F(Profile, TheFlagIsTrueOrFalseAndTheJobKeepsIt) {
  start({"--workers", "0"});  // nothing judges: the jobs stay as queued
  const std::string ada = sign_in("ada");
  for (const json& wrong : {json("yes"), json(1), json(nullptr), json::object(), json::array({true})}) {
    const auto refused = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}, {"profile", wrong}});
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 400) << "profile " << wrong.dump() << ": " << refused->body;
    EXPECT_NE(json::parse(refused->body).value("error", "").find("\"profile\" is true or false"),
              std::string::npos)
        << refused->body;
  }
  std::map<bool, std::int64_t> jobs;
  for (const bool profile : {true, false}) {
    const auto queued = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}, {"profile", profile}});
    ASSERT_EQ(queued->status, 202) << queued->body;
    jobs[profile] = json::parse(queued->body)["id"].get<std::int64_t>();
  }
  const auto unsaid = submit(ada, {{"stage", "reduction/2"}, {"source", "x"}});
  ASSERT_EQ(unsaid->status, 202) << unsaid->body;
  const auto unsaid_id = json::parse(unsaid->body)["id"].get<std::int64_t>();
  for (const auto& [id, profiled] : std::vector<std::pair<std::int64_t, bool>>{
           {jobs[true], true}, {jobs[false], false}, {unsaid_id, false}}) {
    const Answer shown = ask("GET", "/api/jobs/" + std::to_string(id), ada);
    ASSERT_EQ(shown.status, 200) << shown.text;
    EXPECT_EQ(shown.body["profile"], profiled) << id;
    EXPECT_TRUE(shown.body["ncu_report"].is_null()) << shown.text;
    EXPECT_EQ(
        testing::sql_value(store_location(), "SELECT profile FROM jobs WHERE id = " + std::to_string(id)),
        on_postgres() ? (profiled ? "t" : "f") : (profiled ? "1" : "0"));
  }
  // One submission, sent again under its key: the same flag is the same submission; another is not.
  const json body = {{"stage", "reduction/2"}, {"source", "keyed"}, {"profile", true}};
  auto keyed = [&](const json& sent) {
    return client().Post("/api/jobs", {{"Authorization", "Bearer " + ada}, {"Idempotency-Key", "k-1"}},
                         sent.dump(), "application/json");
  };
  ASSERT_EQ(keyed(body)->status, 202);
  EXPECT_EQ(keyed(body)->status, 200);
  json unprofiled = body;
  unprofiled["profile"] = false;
  EXPECT_EQ(keyed(unprofiled)->status, 422);
}

TEST_F(Profile, TheReportIsDownloadedByWhoeverMayReadTheJobAndNobodyElse) {
  const std::string admin = make_admin();
  start({"--workers", "0"});
  const MadeClass a = make_class(admin, "Class Aleph", "Ia");
  const MadeClass b = make_class(admin, "Class Beth", "Ib");
  const Answer assistant =
      ask("POST", class_path(a.id, "/staff"), a.instructor, json{{"name", "Ta"}, {"role", "ta"}});
  ASSERT_EQ(assistant.status, 201) << assistant.text;
  const std::string owner = join(a.invite, "Zephyrine Quill");
  const std::string other = join(a.invite, "Other Learner");
  const std::int64_t job = testing::insert_finished_job(store_location(), learner_id(owner), "reduction/3",
                                                        "accepted", report_with_hot_spots());
  const std::int64_t without = testing::insert_finished_job(store_location(), learner_id(owner),
                                                            "reduction/3", "accepted", report_with(1));
  ASSERT_GT(job, 0);
  keep_report(job, report_bytes());

  // The job says a report is kept, and its size, to its learner and to the class's staff.
  const Answer own = ask("GET", "/api/jobs/" + std::to_string(job), owner);
  ASSERT_EQ(own.status, 200) << own.text;
  EXPECT_EQ(own.body["ncu_report"], json({{"bytes", report_bytes().size()}})) << own.text;
  EXPECT_EQ(own.body["report"]["hot_spots"]["lines"][0]["line"], 7);
  const Answer staff_view = ask("GET", class_path(a.id, "/jobs/" + std::to_string(job)), a.instructor);
  EXPECT_EQ(staff_view.body["ncu_report"], json({{"bytes", report_bytes().size()}})) << staff_view.text;
  EXPECT_TRUE(ask("GET", "/api/jobs/" + std::to_string(without), owner).body["ncu_report"].is_null());

  const std::string who_reads[] = {owner, a.instructor, assistant.body["token"].get<std::string>(), admin};
  for (const std::string& token : who_reads) {
    const Answer got = ask("GET", report_path(job), token);
    EXPECT_EQ(got.status, 200) << token << ": " << got.text;
    EXPECT_EQ(got.text, report_bytes()) << token;
    EXPECT_EQ(got.header("Content-Type"), "application/octet-stream");
    EXPECT_EQ(got.header("Content-Disposition"),
              "attachment; filename=\"cudojo-job-" + std::to_string(job) + ".ncu-rep\"");
  }
  const std::vector<std::pair<std::string, int>> refused = {
      {other, 404}, {b.instructor, 404}, {"", 401}, {"not-a-token", 401}};
  for (const auto& [token, status] : refused) {
    const Answer got = ask("GET", report_path(job), token);
    EXPECT_EQ(got.status, status) << "as '" << token << "': " << got.text;
    EXPECT_EQ(got.text.find("NVIDIA Nsight Compute"), std::string::npos) << token;
  }
  // None kept, or no such job: 404 to everyone, the job's learner included.
  EXPECT_EQ(ask("GET", report_path(without), owner).status, 404);
  EXPECT_EQ(ask("GET", report_path(without), admin).status, 404);
  EXPECT_EQ(ask("GET", report_path(job + 1000), admin).status, 404);
  EXPECT_EQ(ask("GET", "/api/jobs/x/ncu-report", owner).status, 404);
}

// A profiled job that does not pass the tests (here it does not compile) is judged as any other:
// its report shows no hot spots, and no Nsight Compute report is kept.
TEST_F(Profile, AProfiledJobThatFailsKeepsNoReport) {
  start();
  const std::string ada = sign_in("ada");
  const auto queued =
      submit(ada, {{"stage", "reduction/2"}, {"source", compile_error_source()}, {"profile", true}});
  ASSERT_EQ(queued->status, 202) << queued->body;
  const auto id = json::parse(queued->body)["id"].get<std::int64_t>();
  const json done = wait_done(ada, id);
  EXPECT_EQ(done["verdict"], "compile_error") << done.dump();
  EXPECT_EQ(done["profile"], true);
  EXPECT_TRUE(done["ncu_report"].is_null()) << done.dump();
  EXPECT_EQ(ask("GET", report_path(id), ada).status, 404);
}

// On a GPU: the judge profiles a passing kernel, and the report it wrote is the one downloaded.
TEST_F(Profile, OnAGpuAProfiledPassingJobHasHotSpotsAndItsReport) {
  const auto gpus = testing::run_cli("gpus");
  if (gpus.exit_code != 0 || gpus.out.empty() || gpus.out[0] == '0')
    GTEST_SKIP() << "needs an NVIDIA GPU (cudojo gpus found none)";
  start();
  const std::string ada = sign_in("ada");
  std::ifstream in(testing::source_root() / "course" / "reduction" / "02-atomic-sum" / "reference.cu");
  const std::string source((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(source.empty()) << "the stage's reference was not found";
  const auto queued = submit(ada, {{"stage", "reduction/2"}, {"source", source}, {"profile", true}});
  ASSERT_EQ(queued->status, 202) << queued->body;
  const auto id = json::parse(queued->body)["id"].get<std::int64_t>();
  json done = json::object();  // a profile adds seconds to the check: up to three minutes in all
  for (int i = 0; i < 1800 && done.value("state", "") != "done"; ++i) {
    const Answer shown = ask("GET", "/api/jobs/" + std::to_string(id), ada);
    if (shown.status == 200) done = shown.body;
    if (done.value("state", "") != "done") std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(done["verdict"] == "accepted" || done["verdict"] == "too_slow") << done.dump();
  EXPECT_FALSE(done["report"]["hot_spots"]["lines"].empty()) << done["report"]["hot_spots"].dump();
  ASSERT_TRUE(done["ncu_report"].is_object()) << done.dump();
  const Answer got = ask("GET", report_path(id), ada);
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.text.size(), done["ncu_report"]["bytes"].get<std::size_t>());
  // scripts/machine-view-check.sh opens the download with `ncu --import`.
  if (const char* keep = std::getenv("CUDOJO_KEEP_DOWNLOADED_REPORT"))
    std::ofstream(keep, std::ios::binary) << got.text;
}

}  // namespace
}  // namespace cudojo::api_testing

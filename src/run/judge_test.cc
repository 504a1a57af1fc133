// run_check's wiring with real processes and no GPU: a shell script plays `cudojo worker`, speaking
// the protocol, so the pipeline (prepared workers, the session, the GPU hand-over, decide) runs as
// it does on a GPU machine.
#include "run/judge.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace cudojo {
namespace {

using Clock = std::chrono::steady_clock;

class FakeWorkerProgram : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cudojo-judge-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    stage_.id = "reduction/3";
    stage_.contract = "one_accumulator";
    stage_.kernel = "reduce";
    stage_.gate.rule = GateRule::kTimeRatio;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A worker program: `body` runs after it has said ready.
  std::string program(const std::string& body) {
    const auto path = dir_ / "worker";
    std::ofstream(path) << "#!/bin/sh\necho '{\"event\":\"ready\"}' >&3\n" << body;
    chmod(path.c_str(), 0755);
    return path.string();
  }

  CheckRequest request(const std::string& worker_body) {
    CheckRequest request;
    request.stage = &stage_;
    request.source = "__global__ void reduce(const float*, float*, int) {}";
    request.file_name = "mine.cu";
    request.seed = 1;
    request.workers.worker_executable = program(worker_body);
    request.workers.sanitize = false;
    return request;
  }

  std::filesystem::path dir_;
  Stage stage_;
};

std::string completed_report(double submission_ms, double reference_ms) {
  Report report;
  report.stage = "reduction/3";
  report.compile.ok = true;
  report.tests = {{"exact n=1", 1, "exact", 1, 1, true, "bitwise"}};
  report.metrics.time_ms = TimeStats{submission_ms, submission_ms, submission_ms, 20};
  report.metrics.reference_time_ms = TimeStats{reference_ms, reference_ms, reference_ms, 20};
  report.metrics.time_ratio = submission_ms / reference_ms;
  report.metrics.metrics_source = "cupti";  // so the parent does not look for ncu
  return nlohmann::json{{"event", "result"}, {"outcome", "completed"}, {"report", report}}.dump();
}

TEST_F(FakeWorkerProgram, ACorrectKernelIsAcceptedAfterTheGpuIsHandedOver) {
  CheckRequest checked = request(
      "read job\n"
      "echo '{\"event\":\"compiled\",\"compile\":{\"ok\":true,\"arch\":\"sm_90\"},\"builds\":{}}' >&3\n"
      "echo '{\"event\":\"await_gpu\"}' >&3\n"
      "read grant\n"
      "case \"$grant\" in *'\"measure\":true'*) echo '" +
      completed_report(0.05, 0.04) + "' >&3 ;; esac\n");
  int held = 0;
  checked.before_exclusive_gpu = [&] { ++held; };
  std::vector<std::string> phases;
  checked.on_progress = [&](std::string_view phase) { phases.emplace_back(phase); };
  const Report report = run_check(checked);
  EXPECT_EQ(report.verdict, Verdict::kAccepted) << report.message;
  EXPECT_EQ(held, 1);
  EXPECT_EQ(phases.front(), "compiled");
  EXPECT_TRUE(report.timings_ms.count("held_for_tools"));
  EXPECT_GT(report.timings_ms.at("total"), 0);
  EXPECT_EQ(report.file, "mine.cu");
}

TEST_F(FakeWorkerProgram, AnOversizeSourceNeverReachesAWorker) {
  CheckRequest checked = request("touch " + (dir_ / "started").string() + "\nread job\n");
  checked.source = std::string(checked.workers.limits.max_source_bytes + 1, ' ');
  const Report report = run_check(checked);
  EXPECT_EQ(report.verdict, Verdict::kCompileError);
  EXPECT_NE(report.compile.log.find("the limit is"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "started"));
}

TEST_F(FakeWorkerProgram, PreparedWorkersSayWhenTheyHaveStarted) {
  WorkerSettings settings;
  settings.sanitize = false;
  settings.worker_executable = program("read job\n");
  PreparedWorkers ready(settings);
  const auto started = Clock::now();
  ready.wait_until_started(started + std::chrono::seconds(5));
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  EXPECT_TRUE(ready.ready());

  // One that never says so is waited for only until the deadline.
  const auto path = dir_ / "silent";
  std::ofstream(path) << "#!/bin/sh\nsleep 30\n";
  chmod(path.c_str(), 0755);
  settings.worker_executable = path.string();
  PreparedWorkers silent(settings);
  const auto waited = Clock::now();
  silent.wait_until_started(waited + std::chrono::milliseconds(300));
  EXPECT_LT(Clock::now() - waited, std::chrono::seconds(2));
}

TEST_F(FakeWorkerProgram, APreparedWorkerThatDiedIsReplacedByAFreshOne) {
  WorkerSettings settings;
  settings.sanitize = false;
  settings.worker_executable = "/bin/true";  // ends at once: not ready for any job
  PreparedWorkers dead(settings);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(dead.ready());
  CheckRequest checked = request(
      "read job\n"
      "echo '{\"event\":\"compiled\",\"compile\":{\"ok\":false},\"builds\":{}}' >&3\n"
      "echo '{\"event\":\"result\",\"outcome\":\"compile_error\",\"report\":{\"stage\":\"reduction/3\","
      "\"verdict\":\"compile_error\",\"compile\":{\"ok\":false,\"log\":\"\",\"diagnostics\":[]},\"tests\":[],"
      "\"findings\":[],\"metrics\":{}}}' >&3\n");
  const Report report = run_check(checked, std::move(dead));
  EXPECT_EQ(report.verdict, Verdict::kCompileError) << report.message;
}

}  // namespace
}  // namespace cudojo

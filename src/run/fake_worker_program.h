// A shell script that plays `cudojo worker`, speaking the protocol, so run_check's pipeline
// (prepared workers, the session, the GPU hand-over, decide) runs with real processes and no GPU.
// For the tests of run/judge: judge_test.cc, judge_profile_test.cc.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run/judge.h"

namespace cudojo {

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

// A slot's settings for a fake worker kept warm between jobs (no sanitizers, a short settle).
inline WorkerSettings kept_fake_worker(const std::string& executable) {
  WorkerSettings workers;
  workers.worker_executable = executable;
  workers.sanitize = false;
  workers.keep_alive = true;
  workers.limits.worker_settle_ms = 500;
  return workers;
}

inline std::string completed_report(double submission_ms, double reference_ms) {
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

}  // namespace cudojo

// The profiler's wiring through run_check, with a fake worker and a fake ncu: which metrics the
// worker is asked for, and when ncu stands in for CUPTI.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/environment.h"
#include "run/fake_worker_program.h"
#include "run/judge.h"

namespace cudojo {
namespace {

// CUPTI measured nothing (no metrics_source): ncu stands in, but only for a kernel still correct
// after its timed launches; one caught answering from an earlier launch is not profiled at all.
TEST_F(FakeWorkerProgram, NcuProfilesOnlyAKernelStillCorrectAfterItsTimedLaunches) {
  const auto ncu_ran = dir_ / "ncu-ran";
  const auto ncu = dir_ / "ncu";
  std::ofstream(ncu) << "#!/bin/sh\ntouch " << ncu_ran.string() << "\n";
  chmod(ncu.c_str(), 0755);
  setenv(env::kNcu, ncu.c_str(), 1);
  for (const bool found_wrong_in_timing : {true, false}) {
    std::filesystem::remove(ncu_ran);
    nlohmann::json result = nlohmann::json::parse(completed_report(0.05, 0.04));
    result["report"]["metrics"].erase("metrics_source");
    if (found_wrong_in_timing)
      result["report"]["findings"] =
          nlohmann::json::array({Finding{"stale_answer", "kept from a launch", {}}});
    CheckRequest checked = request(
        "read job\n"
        "echo '{\"event\":\"compiled\",\"compile\":{\"ok\":true,\"arch\":\"sm_90\"},\"builds\":{}}' >&3\n"
        "echo '{\"event\":\"await_gpu\"}' >&3\nread grant\necho '" +
        result.dump() + "' >&3\n");
    run_check(checked);
    EXPECT_EQ(std::filesystem::exists(ncu_ran), !found_wrong_in_timing)
        << (found_wrong_in_timing ? "ncu profiled a kernel found wrong in its timed launches"
                                  : "ncu did not stand in for CUPTI");
  }
  unsetenv(env::kNcu);
}

// SM throughput costs most of the profiler's passes, each with the GPU alone: the worker is asked
// for it only where the gate reads it (min_sm_throughput_ratio) or the caller wants every metric,
// and ncu, standing in, is given the same list.
TEST_F(FakeWorkerProgram, SmThroughputIsProfiledOnlyWhereTheGateReadsItOrWhenAsked) {
  const auto job_seen = dir_ / "job.json";
  const auto ncu_args = dir_ / "ncu-args";
  const auto ncu = dir_ / "ncu";
  // It writes its arguments down and a CSV of DRAM throughput for two kernels where it is told to.
  std::ofstream(ncu)
      << "#!/bin/sh\necho \"$@\" > " << ncu_args.string()
      << "\nwhile [ $# -gt 0 ]; do [ \"$1\" = --log-file ] && log=$2; shift; done\n"
         "printf '\"ID\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\\n"
         "\"0\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%%\",\"10\"\\n"
         "\"1\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%%\",\"20\"\\n' > \"$log\"\n";
  chmod(ncu.c_str(), 0755);
  setenv(env::kNcu, ncu.c_str(), 1);
  nlohmann::json result = nlohmann::json::parse(completed_report(0.05, 0.04));
  result["report"]["metrics"].erase("metrics_source");  // so ncu stands in
  struct Case {
    std::optional<double> min_sm_throughput_ratio;
    bool all_metrics;
    bool expected;
  };
  for (const Case& c :
       {Case{std::nullopt, false, false}, Case{0.9, false, true}, Case{std::nullopt, true, true}}) {
    stage_.gate.min_sm_throughput_ratio = c.min_sm_throughput_ratio;
    CheckRequest checked = request(
        "read job\necho \"$job\" > " + job_seen.string() +
        "\n"
        "echo '{\"event\":\"compiled\",\"compile\":{\"ok\":true,\"arch\":\"sm_90\"},\"builds\":{}}' >&3\n"
        "echo '{\"event\":\"await_gpu\"}' >&3\nread grant\necho '" +
        result.dump() + "' >&3\n");
    checked.all_metrics = c.all_metrics;
    const Report report = run_check(checked);
    std::ifstream job_file(job_seen);
    const auto job = nlohmann::json::parse(job_file);
    const std::string when =
        fmt::format("gate ratio {}, all_metrics {}", c.min_sm_throughput_ratio.value_or(0), c.all_metrics);
    EXPECT_EQ(job.at("profile_sm_throughput").get<bool>(), c.expected) << when;
    std::ifstream args_file(ncu_args);
    const std::string args((std::istreambuf_iterator<char>(args_file)), std::istreambuf_iterator<char>());
    EXPECT_NE(args.find("dram__throughput"), std::string::npos) << when << ": " << args;
    EXPECT_EQ(args.find("sm__throughput") != std::string::npos, c.expected) << when << ": " << args;
    EXPECT_EQ(report.metrics.metrics_note.find("SM throughput not measured") != std::string::npos,
              !c.expected)
        << when << ": " << report.metrics.metrics_note;
  }
  unsetenv(env::kNcu);
}

}  // namespace
}  // namespace cudojo

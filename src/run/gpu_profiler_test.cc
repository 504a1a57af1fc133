// The GPU's profiling process through run_check, with shell scripts playing the check worker, the
// profiling process and ncu: what it is given, when it runs, what joins the report, and when it is
// let go. Its CUPTI side runs on the H200 (tests/e2e, evidence/).
#include "run/gpu_profiler.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/environment.h"
#include "run/fake_worker_program.h"
#include "run/judge.h"

namespace cudojo {
namespace {

std::string echo(const std::string& line) { return "echo '" + line + "' >&3\n"; }

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class GpuProfilerTest : public FakeWorkerProgram {
 protected:
  void TearDown() override {
    unsetenv(env::kNcu);
    FakeWorkerProgram::TearDown();
  }

  // A kept check worker whose kernel is correct: it sends its builds, is timed, asks for its
  // profile, then sends `result` (a completed report without CUPTI's figures by default).
  WorkerSettings check_worker(const std::string& result = "") {
    nlohmann::json built = BuiltKernel{"reduce_lowered", {'c', 'u', 'b', 'i', 'n'}, ImageFormat::kCubin, {}};
    nlohmann::json completed = nlohmann::json::parse(completed_report(0.05, 0.04));
    completed["report"]["metrics"].erase("metrics_source");
    const auto path = dir_ / "check-worker";
    std::ofstream(path) << "#!/bin/sh\necho '{\"event\":\"ready\"}' >&3\nwhile read job; do\n"
                        << "echo \"$job\" > " << (dir_ / "check-job.json").string() << "\n"
                        << echo(nlohmann::json{{"event", "compiled"},
                                               {"compile", {{"ok", true}, {"arch", "sm_90"}}},
                                               {"builds", {{"submission", built}, {"reference", built}}}}
                                    .dump())
                        << echo(R"({"event":"await_gpu"})") << "read grant\n"
                        << echo(
                               nlohmann::json{{"event", "await_profile"}, {"time_ratio", time_ratio_}}.dump())
                        << "read answer\n"
                        << echo(result.empty() ? completed.dump() : result)
                        << echo(R"({"event":"idle","reusable":true,"why":""})") << "done\n";
    chmod(path.c_str(), 0755);
    return kept_fake_worker(path.string());
  }

  // The profiling process: notes each start and its pid, keeps the job it was given, and answers
  // each one with `per_job`.
  std::string profiler_program(const std::string& per_job) {
    const auto path = dir_ / "profiler";
    std::ofstream(path) << "#!/bin/sh\necho \"$2\" >> " << (dir_ / "profiler-starts").string()
                        << "\necho $$ > " << (dir_ / "profiler-pid").string()
                        << "\necho '{\"event\":\"ready\"}' >&3\n"
                        << "while read job; do\necho \"$job\" > " << (dir_ / "profile-job.json").string()
                        << "\n"
                        << per_job << "done\n";
    chmod(path.c_str(), 0755);
    return path.string();
  }

  static std::string profiled(const std::string& source, bool reusable = true) {
    nlohmann::json report = nlohmann::json::parse(completed_report(0.05, 0.04))["report"];
    report["metrics"] = {{"metrics_source", source},
                         {"metrics_note", source.empty() ? "CUPTI: CUPTI_ERROR_HARDWARE_BUSY" : ""},
                         {"metrics_passes", 1},
                         {"sm_throughput_pct", 11.0},
                         {"dram_throughput_pct", 42.0},
                         {"global_atomics", 0.0},
                         {"kernel_duration_ms", 0.015}};
    report["timings_ms"] = {{"profile_first_pass", 7.0}, {"load", 3.0}};
    return echo(R"({"event":"phase","name":"profile","launches":1})") +
           echo(nlohmann::json{{"event", "result"}, {"outcome", "completed"}, {"report", report}}.dump()) +
           echo(std::string(R"({"event":"idle","reusable":)") + (reusable ? "true" : "false") +
                R"(,"why":""})");
  }

  int profiler_starts() const {
    std::ifstream in(dir_ / "profiler-starts");
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }

  // A fake ncu that writes down whether the profiling process was still alive when it started.
  void fake_ncu() {
    const auto ncu = dir_ / "ncu";
    std::ofstream(ncu) << "#!/bin/sh\nif kill -0 \"$(cat " << (dir_ / "profiler-pid").string()
                       << ")\" 2>/dev/null; then echo alive; else echo gone; fi > "
                       << (dir_ / "ncu-saw").string() << "\n";
    chmod(ncu.c_str(), 0755);
    setenv(env::kNcu, ncu.c_str(), 1);
  }

  CheckRequest request_with(const WorkerSettings& workers, GpuLease& lease, GpuProfiler& profiler) {
    CheckRequest checked = request("");
    checked.workers = workers;
    checked.lease = &lease;
    checked.gpu_profiler = &profiler;
    return checked;
  }

  double time_ratio_ = 1.25;  // what the check worker measured, as it says in await_profile

  JudgeLimits profiler_limits() {
    JudgeLimits limits;
    limits.worker_settle_ms = 500;
    return limits;
  }
};

TEST_F(GpuProfilerTest, ACorrectKernelIsProfiledByTheGpusProcessWithItsBuildsAndTheFiguresJoinTheReport) {
  fake_ncu();
  GpuLease lease;
  GpuProfiler profiler(profiler_program(profiled("cupti")), {}, profiler_limits());
  const WorkerSettings workers = check_worker();
  PreparedWorkers warm(workers);
  for (int job = 0; job < 2; ++job) {
    const Report report = run_check(request_with(workers, lease, profiler), warm);
    ASSERT_EQ(report.verdict, Verdict::kAccepted) << report.message;
    EXPECT_EQ(report.metrics.metrics_source, "cupti");
    ASSERT_TRUE(report.metrics.kernel.has_value());
    EXPECT_EQ(report.metrics.kernel->dram_throughput_pct, 42.0);
    ASSERT_TRUE(report.metrics.time_ms.has_value()) << "the check worker's timed figures were lost";
    EXPECT_EQ(report.metrics.time_ms->median_ms, 0.05);
    EXPECT_EQ(report.timings_ms.count("profile_first_pass"), 1u);
    EXPECT_EQ(report.timings_ms.count("load"), 0u) << "only the profile's own steps join the report";
    EXPECT_EQ(report.timings_ms.count("gpu_profiler"), 1u);
  }
  const auto check_job = nlohmann::json::parse(read_text(dir_ / "check-job.json"));
  EXPECT_TRUE(check_job.at("profile_elsewhere").get<bool>()) << "the check worker would enable a profiler";
  const auto profile_job = nlohmann::json::parse(read_text(dir_ / "profile-job.json"));
  EXPECT_EQ(profile_job.at("mode"), "profile");
  EXPECT_FALSE(profile_job.at("gpu_turns").get<bool>()) << "its work is covered by the slot's turn alone";
  EXPECT_EQ(profile_job.at("submission_build").at("lowered_name"), "reduce_lowered")
      << "the profiling process was not given the check worker's build";
  EXPECT_EQ(read_text(dir_ / "profiler-starts"), "profile\n") << "started as `worker profile`, once";
  EXPECT_EQ(profiler.started_processes(), 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ncu-saw")) << "ncu ran although CUPTI measured";
}

TEST_F(GpuProfilerTest, TheProfileRunsWhileTheSlotHasTheGpuAlone) {
  GpuLease lease;
  const auto profiling = dir_ / "profiling-now";
  GpuProfiler profiler(profiler_program("touch " + profiling.string() + "\nsleep 0.5\n" + profiled("cupti")),
                       {}, profiler_limits());
  const WorkerSettings workers = check_worker();
  PreparedWorkers warm(workers);
  std::atomic<bool> seen_alone{false};
  std::thread judge([&] { run_check(request_with(workers, lease, profiler), warm); });
  for (int tries = 0; tries < 500 && !std::filesystem::exists(profiling); ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(std::filesystem::exists(profiling)) << "the profiling process was never asked";
  seen_alone = lease.state().alone;
  judge.join();
  EXPECT_TRUE(seen_alone) << "the profile ran while other slots could share the GPU";
  EXPECT_FALSE(lease.state().alone) << "the turn alone outlived the job";
}

// CUPTI failed in the profiling process (its counters busy): ncu stands in, as it does for a check
// worker's CUPTI, and the process, which would keep the counters, is gone before ncu starts.
TEST_F(GpuProfilerTest, NcuStandsInOnlyAfterTheProfilingProcessHasGone) {
  fake_ncu();
  GpuLease lease;
  GpuProfiler profiler(profiler_program(profiled("")), {}, profiler_limits());
  const WorkerSettings workers = check_worker();
  PreparedWorkers warm(workers);
  const Report report = run_check(request_with(workers, lease, profiler), warm);
  EXPECT_EQ(report.verdict, Verdict::kAccepted) << report.message;
  ASSERT_TRUE(std::filesystem::exists(dir_ / "ncu-saw")) << "ncu did not stand in";
  EXPECT_EQ(read_text(dir_ / "ncu-saw"), "gone\n") << "ncu ran beside a process holding the counters";
  EXPECT_FALSE(profiler.running());
  run_check(request_with(workers, lease, profiler), warm);
  EXPECT_EQ(profiler.started_processes(), 2) << "the next profile did not start a process of its own";
}

TEST_F(GpuProfilerTest, AProfileThatHangsIsStoppedAndTheCheckStillEnds) {
  fake_ncu();
  GpuLease lease;
  JudgeLimits limits = profiler_limits();
  limits.phase_floor_ms = 300;
  GpuProfiler profiler(
      profiler_program(echo(R"({"event":"phase","name":"profile","launches":1})") + "sleep 30\n"), {},
      limits);
  const WorkerSettings workers = check_worker();
  PreparedWorkers warm(workers);
  const auto started = std::chrono::steady_clock::now();
  const Report report = run_check(request_with(workers, lease, profiler), warm);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(report.verdict, Verdict::kAccepted) << report.message;
  EXPECT_NE(report.metrics.metrics_note.find("profiling process"), std::string::npos)
      << report.metrics.metrics_note;
  EXPECT_NE(report.metrics.metrics_note.find("still running"), std::string::npos)
      << report.metrics.metrics_note;
  EXPECT_FALSE(profiler.running()) << "a process whose kernel hung was kept";
}

TEST_F(GpuProfilerTest, AFaultAfterTheProfileLetsTheProfilingProcessGoToo) {
  GpuLease lease;
  GpuProfiler profiler(profiler_program(profiled("cupti")), {}, profiler_limits());
  Report faulted;
  faulted.stage = "reduction/3";
  faulted.compile.ok = true;
  faulted.error_name = "cudaErrorIllegalAddress";
  const WorkerSettings workers = check_worker(
      nlohmann::json{{"event", "result"}, {"outcome", "runtime_error"}, {"report", faulted}}.dump());
  PreparedWorkers warm(workers);
  const Report report = run_check(request_with(workers, lease, profiler), warm);
  EXPECT_EQ(report.verdict, Verdict::kRuntimeError) << report.message;
  EXPECT_FALSE(profiler.running()) << "a process that ran a kernel which faulted was kept";
}

TEST_F(GpuProfilerTest, AProcessThatSaysItCannotStayIsReplacedAndNoneIsKeptForEver) {
  Job kept;
  kept.keep_alive = true;
  {
    GpuProfiler profiler(profiler_program(profiled("cupti", false)), {}, profiler_limits());
    for (int job = 0; job < 2; ++job) profiler.profile(kept);
    EXPECT_EQ(profiler.started_processes(), 2) << "a process that could not settle was given another job";
  }
  JudgeLimits limits = profiler_limits();
  limits.max_jobs_per_worker_set = 2;
  GpuProfiler profiler(profiler_program(profiled("cupti")), {}, limits);
  for (int job = 0; job < 5; ++job) {
    const GpuProfileOutcome outcome = profiler.profile(kept);
    ASSERT_TRUE(outcome.report.has_value()) << outcome.failure;
    EXPECT_EQ(outcome.started_now, job % 2 == 0) << "job " << job;
  }
  EXPECT_EQ(profiler.started_processes(), 3);
}

TEST_F(GpuProfilerTest, RefillStartsOneProcessAheadAndWaitsForAnotherSlotsTurnAlone) {
  GpuLease lease;
  GpuProfiler profiler(profiler_program(profiled("cupti")), {}, profiler_limits());
  std::atomic<bool> refilled{false};
  std::thread refill;
  {
    GpuLease::Hold timing = lease.alone();
    refill = std::thread([&] {
      profiler.refill(&lease, std::chrono::steady_clock::now() + std::chrono::seconds(5));
      refilled = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(refilled) << "a process started while another slot had the GPU alone";
  }
  refill.join();
  profiler.refill(&lease, std::chrono::steady_clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(profiler.started_processes(), 1);
  EXPECT_TRUE(profiler.running());
  Job kept;
  kept.keep_alive = true;
  const GpuProfileOutcome outcome = profiler.profile(kept);
  EXPECT_FALSE(outcome.started_now) << "the process started ahead was not used";
}

TEST(MergeProfile, TheTimedFiguresStayAndAProfiledLaunchesFindingIsAdded) {
  nlohmann::json check = nlohmann::json::parse(completed_report(0.05, 0.04));
  check["report"]["metrics"]["metrics_note"] = "from the check worker";
  GpuProfileOutcome outcome;
  outcome.report = nlohmann::json{{"metrics", {{"metrics_source", "cupti"}, {"dram_throughput_pct", 42.0}}},
                                  {"findings", {Finding{"stale_answer", "answered wrong when profiled", {}}}},
                                  {"timings_ms", {{"profile_passes", 9.0}, {"compile", 5.0}}}};
  outcome.ms = 12;
  merge_profile(outcome, check);
  const Report report = check.at("report").get<Report>();
  ASSERT_TRUE(report.metrics.time_ms.has_value());
  EXPECT_EQ(report.metrics.time_ms->median_ms, 0.05);
  EXPECT_EQ(report.metrics.metrics_source, "cupti");
  EXPECT_EQ(report.metrics.metrics_note, "") << "a note of the check worker's stayed beside the new figures";
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].code, "stale_answer");
  EXPECT_EQ(report.timings_ms.at("profile_passes"), 9.0);
  EXPECT_EQ(report.timings_ms.count("compile"), 0u);
  EXPECT_EQ(report.timings_ms.at("gpu_profiler"), 12.0);

  GpuProfileOutcome failed;
  failed.failure = "the GPU's profiling process: it ended";
  nlohmann::json second = nlohmann::json::parse(completed_report(0.05, 0.04));
  merge_profile(failed, second);
  EXPECT_EQ(second["report"]["metrics"]["metrics_source"], "");
  EXPECT_EQ(second["report"]["metrics"]["metrics_note"], failed.failure);
  nlohmann::json not_a_result = "text";
  merge_profile(outcome, not_a_result);  // nothing to merge into, and no throw
  EXPECT_EQ(not_a_result, "text");
}

// SM throughput takes most of the profiler's passes: the profiling process is asked for it only
// where the gate will read it, from the time ratio the check worker measured, or when asked.
TEST_F(GpuProfilerTest, SmThroughputIsProfiledOnlyWhereTheGateWillReadIt) {
  GpuLease lease;
  GpuProfiler profiler(profiler_program(profiled("cupti")), {}, profiler_limits());
  stage_.gate.min_sm_throughput_ratio = 0.8;
  struct Case {
    double ratio;
    bool all_metrics;
    bool floor;
    bool expected;
  };
  for (const Case& c : {Case{0.95, false, true, false}, Case{1.25, false, true, true},
                        Case{1.25, false, false, false}, Case{0.95, true, false, true}}) {
    time_ratio_ = c.ratio;
    if (!c.floor) stage_.gate.min_sm_throughput_ratio.reset();
    const WorkerSettings workers = check_worker();
    PreparedWorkers warm(workers);
    CheckRequest checked = request_with(workers, lease, profiler);
    checked.all_metrics = c.all_metrics;
    run_check(checked, warm);
    const auto profile_job = nlohmann::json::parse(read_text(dir_ / "profile-job.json"));
    EXPECT_EQ(profile_job.at("profile_sm_throughput").get<bool>(), c.expected)
        << "ratio " << c.ratio << ", all metrics " << c.all_metrics << ", floor " << c.floor;
    stage_.gate.min_sm_throughput_ratio = 0.8;
  }
}

// A profile whose CUPTI failed in a process that then could not settle (its context broken by
// another process's fault, as on the H200) is tried once more in a fresh process; one that failed
// because the learner's kernel failed is not.
TEST_F(GpuProfilerTest, AProfileWhoseProcessBrokeIsTriedOnceMoreInAFreshOne) {
  Job kept;
  kept.keep_alive = true;
  for (const bool kernel_failed : {false, true}) {
    std::filesystem::remove(dir_ / "broke-once");
    std::filesystem::remove(dir_ / "profiler-starts");
    nlohmann::json broken = nlohmann::json::parse(completed_report(0.05, 0.04))["report"];
    broken["metrics"] = {
        {"metrics_source", ""},
        {"metrics_note", kernel_failed ? "CUPTI: a profiled kernel failed"
                                       : "CUPTI: cuptiRangeProfilerStop failed: CUPTI_ERROR_UNKNOWN"}};
    const std::string broke_once = (dir_ / "broke-once").string();
    GpuProfiler profiler(
        profiler_program(
            "if [ ! -e " + broke_once + " ]; then touch " + broke_once + "\n" +
            echo(nlohmann::json{{"event", "result"}, {"outcome", "completed"}, {"report", broken}}.dump()) +
            echo(R"({"event":"idle","reusable":false,"why":"CUDA reported an error"})") + "else\n" +
            profiled("cupti") + "fi\n"),
        {}, profiler_limits());
    const GpuProfileOutcome outcome = profiler.profile(kept);
    ASSERT_TRUE(outcome.report.has_value()) << outcome.failure;
    const std::string source = outcome.report->at("metrics").value("metrics_source", "");
    EXPECT_EQ(source, kernel_failed ? "" : "cupti") << "kernel failed: " << kernel_failed;
    EXPECT_EQ(profiler.started_processes(), kernel_failed ? 1 : 2) << "kernel failed: " << kernel_failed;
    EXPECT_EQ(outcome.retried_after_ms > 0, !kernel_failed);
  }
}

// A profiling process that cannot start costs its profiles their CUPTI figures (ncu stands in),
// never the slot: refill does not throw, and the profile's note says why.
TEST_F(GpuProfilerTest, AProcessThatCannotStartLeavesANoteAndNothingBroken) {
  GpuLease lease;
  GpuProfiler profiler((dir_ / "no-such-program").string(), {}, profiler_limits());
  EXPECT_NO_THROW(profiler.refill(&lease, std::chrono::steady_clock::now() + std::chrono::seconds(2)));
  Job kept;
  kept.keep_alive = true;
  const GpuProfileOutcome outcome = profiler.profile(kept);
  EXPECT_FALSE(outcome.report.has_value());
  EXPECT_NE(outcome.failure.find("profiling process"), std::string::npos) << outcome.failure;
  EXPECT_FALSE(lease.state().alone || lease.state().sharers > 0) << "the lease was left held";
}

}  // namespace
}  // namespace cudojo

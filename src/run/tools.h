// The tool workers around a check: compute-sanitizer's racecheck, synccheck and memcheck, and ncu
// when CUPTI could not measure in the check worker. Each tool wraps a `cudojo worker` of its own.
//
// The sanitizer workers are started with the check worker (or earlier, pre-started by the
// server), so each tool's own start-up and CUDA initialisation overlap the compile and the tests;
// they receive their job (the check worker's builds) as soon as it has compiled. They need no
// exclusive GPU: what they find does not depend on timing. The check worker waits for them before
// it times anything.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/limits.h"
#include "measure/profiler.h"
#include "report/report.h"
#include "run/gpu_lease.h"
#include "run/process.h"
#include "run/protocol.h"

namespace cudojo {

// Reads a worker's messages until it says "ready" (true), or ends, or the deadline passes.
bool wait_for_ready(WorkerProcess& worker, std::chrono::steady_clock::time_point deadline);

// A CUDA tool's path ($ENV_VARIABLE, then PATH, then /usr/local/cuda/bin), or empty.
std::string find_cuda_tool(const std::string& name, const char* env_variable);

// How tool workers are started: the same binary and environment as the check worker.
struct ToolSettings {
  std::string worker_executable;
  WorkerProcess::Environment environment;
  JudgeLimits limits = kDefaultLimits;
  std::string sanitizer_executable;  // empty: not found (the pass is skipped, with a note)
  // Keep each tool worker for the next job after a clean one (a server's warm set): its log is
  // cut per job at the mark the worker leaves (run/tool_marks.h).
  bool keep_alive = false;
};

// What the sanitizer pass found, and how long each tool took.
struct SanitizerOutcome {
  SanitizerSummary summary;
  std::vector<Finding> findings;
  std::map<std::string, double> timings_ms;  // "sanitizer.racecheck", ...
};

// One pre-started worker per tool, each waiting for its job. With keep_alive, the set outlives its
// job: a tool worker whose job was clean waits for the next, the others are let go, and refill()
// starts new ones in their place.
class SanitizerPass {
 public:
  explicit SanitizerPass(const ToolSettings& settings);
  ~SanitizerPass();
  SanitizerPass(const SanitizerPass&) = delete;
  SanitizerPass& operator=(const SanitizerPass&) = delete;

  // Whether every tool worker is still waiting (one that died while pre-started is not).
  bool ready();
  // Waits until every tool worker has said "ready" (its CUDA start-up, under its tool, is done),
  // or has ended, or the deadline passed.
  void wait_until_started(std::chrono::steady_clock::time_point deadline);
  // Starts a worker for every tool that has none.
  void refill();
  // Hands each tool its job (sanitize mode) and starts reading its messages on a thread; each
  // shares `lease` (when given) from its job to its result.
  // `skipped`: tools that can find nothing in this job (racecheck for a kernel without shared
  // memory); they get no job, and are stopped unless kept alive.
  void start(const Job& sanitize_job, GpuLease* lease = nullptr, const std::set<std::string>& skipped = {});
  // Waits for every tool (each within the tool budget) and reads their logs.
  SanitizerOutcome finish(const std::string& file_name);
  // Stops every tool that was given a job: the check ended before their findings mattered. Tools
  // still waiting for theirs stay, when kept alive.
  void cancel();
  // Lets every tool worker go, whatever its last job (the job left doubt about the GPU's memory).
  void discard();
  // Lets go the tool workers that ran the last job's kernel (it left doubt about the GPU's
  // memory); those that were given no job (skipped, or cancelled before their job) never ran it
  // and stay.
  void discard_those_that_ran_the_job();

 private:
  struct Tool;
  ToolSettings settings_;
  std::string note_;  // why the pass cannot run, when it cannot
  std::vector<std::unique_ptr<Tool>> tools_;
  bool started_ = false;
  std::set<std::string> skipped_;  // this job's
  std::unique_ptr<Tool> start_tool(const char* name);
  int print_limit() const;
  static constexpr int kKeptToolJobsOfReports = 50;
  // After a job: drops the tools whose workers did not settle for another.
  void keep_reusable_tools();
};

// Metrics from ncu wrapped around a worker that launches the reference and the submission once
// each; used when CUPTI failed in the check worker. `cupti_error` says why CUPTI failed. With a
// lease (other jobs on the GPU), it runs with the GPU alone; `free_counters`, when given, is
// called once the GPU is alone, before ncu starts (the GPU's profiling process is let go there).
struct NcuMetrics {
  std::optional<KernelMetrics> kernel;
  std::optional<KernelMetrics> reference_kernel;
  std::string note;
  double ms = 0;
};
NcuMetrics measure_with_ncu(const ToolSettings& settings, Job launch_job, const std::string& cupti_error,
                            GpuLease* lease = nullptr, const std::function<void()>& free_counters = {});

}  // namespace cudojo

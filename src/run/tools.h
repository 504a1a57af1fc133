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
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/limits.h"
#include "measure/profiler.h"
#include "report/report.h"
#include "run/process.h"
#include "run/protocol.h"

namespace cudojo {

// Reads a worker's messages until it says "ready" (or ends, or the deadline passes).
void wait_for_ready(WorkerProcess& worker, std::chrono::steady_clock::time_point deadline);

// A CUDA tool's path ($ENV_VARIABLE, then PATH, then /usr/local/cuda/bin), or empty.
std::string find_cuda_tool(const std::string& name, const char* env_variable);

// How tool workers are started: the same binary and environment as the check worker.
struct ToolSettings {
  std::string worker_executable;
  WorkerProcess::Environment environment;
  JudgeLimits limits = kDefaultLimits;
  std::string sanitizer_executable;  // empty: not found (the pass is skipped, with a note)
};

// What the sanitizer pass found, and how long each tool took.
struct SanitizerOutcome {
  SanitizerSummary summary;
  std::vector<Finding> findings;
  std::map<std::string, double> timings_ms;  // "sanitizer.racecheck", ...
};

// One pre-started worker per tool, each waiting for its job.
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
  // Hands each tool its job (sanitize mode) and starts reading its messages on a thread.
  void start(const Job& sanitize_job);
  // Waits for every tool (each within the tool budget) and reads their logs.
  SanitizerOutcome finish(const std::string& file_name);
  // Stops every tool: the check ended before their findings mattered.
  void cancel();

 private:
  struct Tool;
  ToolSettings settings_;
  std::string note_;  // why the pass cannot run, when it cannot
  std::vector<std::unique_ptr<Tool>> tools_;
  bool started_ = false;
};

// Metrics from ncu wrapped around a worker that launches the reference and the submission once
// each; used when CUPTI failed in the check worker. `cupti_error` says why CUPTI failed.
struct NcuMetrics {
  std::optional<KernelMetrics> kernel;
  std::optional<KernelMetrics> reference_kernel;
  std::string note;
  double ms = 0;
};
NcuMetrics measure_with_ncu(const ToolSettings& settings, const Job& launch_job,
                            const std::string& cupti_error);

}  // namespace cudojo

// The parent side of a check: starts a worker, hands it the job, enforces the time limits, and
// turns what the worker reported (or failed to report) into a verdict and a Report. The CLI and
// (later) the server both call run_check; there is no second implementation of judging.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "gate/calibration.h"
#include "report/report.h"
#include "stage/stage.h"

namespace cudojo {

struct CheckRequest {
  const Stage* stage = nullptr;
  std::string source;
  std::string file_name = "submission.cu";
  std::optional<std::string> arch;
  std::optional<std::uint64_t> seed;  // fresh from the OS when unset
  JudgeLimits limits = kDefaultLimits;
  std::string worker_executable;  // the cudojo binary; started as `<it> worker`
  std::string cuda_include_dir;
  // Extra environment for the worker (the server pins each worker to one GPU this way).
  std::vector<std::pair<std::string, std::string>> worker_environment;
  // Called with each phase the worker announces ("compiled", "tests", "timing", ...).
  std::function<void(std::string_view phase)> on_progress;
  // Run compute-sanitizer's racecheck, synccheck and memcheck over one small launch.
  bool sanitize = true;
  // Collect profiler metrics (CUPTI, else ncu) for a correct submission and its reference.
  bool profile = true;
  // Where `cudojo calibrate` stored reference figures per GPU model; empty: none.
  std::string calibration_dir;
  std::string sanitizer_executable;  // empty: $CUDOJO_COMPUTE_SANITIZER, PATH, the toolkit's bin/
};

// Gate inputs after calibration: the reference's median time and SM throughput the gate compares
// with. Calibrated figures for this stage and GPU win when present (the report then names the
// file); otherwise the reference measured in this same run.
struct GateReference {
  std::optional<TimeStats> time_ms;
  std::optional<double> sm_throughput_pct;
  bool calibrated = false;
};
GateReference choose_gate_reference(const Report& report, const std::optional<Calibration>& calibration);

// A CUDA tool's path ($ENV_VARIABLE, then PATH, then /usr/local/cuda/bin), or empty.
std::string find_cuda_tool(const std::string& name, const char* env_variable);

Report run_check(const CheckRequest& request);

// The budget for a phase of `launches` launches, given the reference's time per launch.
double phase_budget_ms(const JudgeLimits& limits, int launches, double reference_ms);

// The path of the running executable (/proc/self/exe), for starting workers.
std::string self_executable();

}  // namespace cudojo

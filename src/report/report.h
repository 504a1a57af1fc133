// The one result shape every front end shows: `cudojo check --json` prints it, the text report is
// drawn from it, and the worker sends its part of it over the pipe. Keys carry their units.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"
#include "compile/nvrtc_compiler.h"
#include "gate/calibration.h"
#include "gate/gate.h"
#include "gpu/gpu_info.h"
#include "measure/profiler.h"
#include "measure/stats.h"
#include "report/hot_spots.h"
#include "report/verdict.h"

namespace cudojo {

struct CompileInfo {
  bool ok = false;
  std::string arch;
  std::string nvrtc;
  std::string log;
  std::vector<Diagnostic> diagnostics;
  double compile_ms = 0;
};

struct Metrics {
  std::int64_t n = 0;
  std::optional<TimeStats> time_ms;
  std::optional<TimeStats> reference_time_ms;
  std::optional<double> time_ratio;
  // A library baseline timed in the same rotation (stages gated against CUB).
  std::string baseline_name;
  std::optional<TimeStats> baseline_time_ms;
  std::optional<double> baseline_ratio;  // the submission's median / the baseline's
  std::optional<double> bandwidth_gbps;
  std::optional<double> pct_of_peak;
  std::string note;  // why figures are missing, when they are
  // Hardware metrics of one launch each at the performance size (CUPTI, or ncu when CUPTI fails).
  std::optional<KernelMetrics> kernel;
  std::optional<KernelMetrics> reference_kernel;
  std::string metrics_source;  // "cupti", "ncu", or "" when unavailable
  std::string metrics_note;    // "metrics unavailable: ..." when they are
  int metrics_passes = 0;      // CUPTI replay passes (each replays reference and submission)
};

struct DeterminismResult {
  std::string data;
  std::int64_t n = 0;
  int runs = 0;
  int distinct = 0;
  double min = 0;
  double max = 0;
};

// The compute-sanitizer pass: which tools ran and what they reported (findings go to findings).
struct SanitizerToolRun {
  std::string tool;
  int errors = 0;
  double seconds = 0;
};

struct SanitizerSummary {
  bool requested = false;
  bool ran = false;
  std::vector<SanitizerToolRun> tools;
  // Tools not run because they could find nothing (racecheck on a kernel without shared memory).
  std::vector<std::string> skipped;
  std::string note;  // why it did not run, when it did not
};

// The counted-barrier launch (compile/barrier_instrumentation.h): whether it ran, how many
// barrier arrivals it saw, and why not when it did not (its finding goes to findings).
struct BarrierCheckSummary {
  bool ran = false;
  std::int64_t n = 0;  // the size of the one launch
  std::uint64_t arrivals = 0;
  std::uint64_t collective_checks = 0;  // lane-executions of a warp collective whose mask was checked
  std::string note;
};

// Which `cudojo serve` node judged a job, on which machine and GPU model: set by the server's
// dispatcher, absent from `cudojo check`'s own reports.
struct JudgedBy {
  std::string node;
  std::string host;
  std::string gpu;  // the model name, or "none" on a host without one
};

// The version of the stage a job was judged under (run/stage_version.h): `digest` names it; the
// parts say which of its inputs changed when two jobs' digests differ.
struct StageVersion {
  std::string digest;       // 16 hex digits over the three parts below
  std::string stage_files;  // 16 hex digits over stage.toml and the references
  std::string calibration;  // 16 hex digits over this stage's calibrated figures ("none" without any)
  int data_generator = 0;   // check/datasets.h kDataGeneratorVersion
  int judge_rules = 0;      // run/stage_version.h kJudgeRulesVersion
};

struct CapturedOutput {
  std::string text;
  bool truncated = false;
  std::uint64_t bytes = 0;  // total bytes the worker printed, kept or not
  std::string note;         // how printing was bounded, when it was
};

struct Report {
  Verdict verdict = Verdict::kInternalError;
  std::string stage;
  std::string file;
  std::string language = "cuda";  // the submission's: cuda, python or rust
  std::optional<GpuInfo> gpu;
  CompileInfo compile;
  std::vector<TestResult> tests;
  std::vector<Finding> findings;
  Metrics metrics;
  std::optional<GateResult> gate;
  std::vector<DeterminismResult> determinism;
  SanitizerSummary sanitizer;
  BarrierCheckSummary barrier_check;
  CalibrationUse calibration;
  CapturedOutput output;
  std::optional<std::string> error_name;  // CUDA's name for a fault, or for a missing device
  std::string message;                    // one sentence: why this verdict
  std::uint64_t seed = 0;
  double wall_ms = 0;
  // Where the time went, per step, in milliseconds: the worker's own steps (compile, cuda_start,
  // tests, timing, profile, ...) and the parent's (sanitizer.<tool>, held_for_tools, ncu, ...).
  // Steps that overlap are each timed whole, so they need not add up to wall_ms.
  std::map<std::string, double> timings_ms;
  std::optional<JudgedBy> judged_by;
  std::optional<StageVersion> stage_version;  // absent from reports made before versions existed
  std::optional<HotSpots> hot_spots;          // when asked for (report/hot_spots.h)
};

void to_json(nlohmann::json& j, const Report& report);
void from_json(const nlohmann::json& j, Report& report);
void to_json(nlohmann::json& j, const Diagnostic& diagnostic);
void from_json(const nlohmann::json& j, Diagnostic& diagnostic);

// The human report: a table with colour where the terminal takes it.
std::string render_text(const Report& report, bool colour);

// Colour is on when stdout is a terminal and NO_COLOR is unset or empty.
bool colour_wanted(int fd);

}  // namespace cudojo

// Hardware metrics for kernels: SM throughput, DRAM throughput, duration and global atomic
// instructions. Two collectors, the same metric names:
//   - the CUPTI range profiler, in the worker (libcupti is opened at run time, so cudojo still
//     starts where it is missing), each kernel launch one range, replayed for as many passes as
//     the metrics need;
//   - Nsight Compute (`ncu --csv`) around a worker, when CUPTI fails; parse_ncu_csv reads it.
// Every failure becomes a sentence ("metrics unavailable: ..."), never an exception.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudojo {

// A metric a collector could not measure is NaN (null in JSON, "n/a" in text), never 0.
struct KernelMetrics {
  double sm_throughput_pct = 0;
  double dram_throughput_pct = 0;
  double duration_ms = 0;
  double global_atomics = 0;  // global atomic + reduction instructions executed (warp level)
};

struct ProfileResult {
  bool ok = false;
  std::string source;                  // "cupti" or "ncu"
  std::string error;                   // why not, when !ok
  std::vector<KernelMetrics> kernels;  // in launch order
  int passes = 0;                      // replay passes CUPTI asked for
  double setup_ms = 0;                 // loading CUPTI and building its configuration (CPU only)
  double passes_ms = 0;                // the replayed launches and reading the counters back
  double enable_ms = 0;                // of passes_ms: enabling the range profiler and its config
  double first_pass_ms = 0;            // of passes_ms: the first pass, from its start to its launches done
  double first_launches_ms = 0;        // of that: the launches (their input made ready, the L2 flushed)
  bool host_side_kept = false;         // CUPTI's host side was made by an earlier profile of this process
  bool found_enabled = false;          // the range profiler was still enabled from an earlier profile
  bool sm_throughput = false;          // SM throughput was in the configuration (asked for, or kept)
  double starts_ms = 0;                // of passes_ms, summed over the passes: starting each pass,
  double launches_ms = 0;              // its launches (input ready, L2 flushed, answer read back),
  double stops_ms = 0;                 // and stopping it
  double decode_ms = 0;                // decoding the counters after the passes
};

// Where each metric stands in profiler_metric_names().
namespace profiler_metric {
enum Index { kSm, kDram, kDuration, kRed, kAtom, kMetricCount };
}

// The metric names, as both CUPTI and ncu spell them; SM throughput is the first.
const std::vector<std::string>& profiler_metric_names();
// Said in a report where SM throughput was left out.
inline constexpr const char* kSmThroughputNotMeasured =
    "SM throughput not measured: the gate does not read it here (it does only on a stage with a "
    "throughput floor, for a kernel slower than the reference), and it takes most of the "
    "profiler's replay passes (`--all-metrics` measures it)";

// Those names joined with commas, as ncu's --metrics takes them, SM throughput only when asked.
std::string ncu_metric_list(bool sm_throughput);

// What a tool run does around one kernel launch: `before` runs once the kernel's input is in
// place, right before the launch. The profiler flushes the L2 there, so the kernel reads its input
// from DRAM as it does in a timed launch.
struct LaunchMarks {
  std::function<void()> before;
};
// One kernel to profile: prepares its input, launches, and calls the marks around the launch.
// It runs once per replay pass.
using ProfiledLaunch = std::function<void(const LaunchMarks&)>;

// Profiles `launches` on the current device, one range per kernel, replaying all of them for as
// many passes as the metrics need (at most max_passes), with `flush_l2` before every launch.
// SM throughput is the maximum of many sub-metrics and takes most of the passes (9 of 10 on an
// H200, evidence/2026-12-03-h200-profiler-passes.txt): without `sm_throughput` it is left out
// (NaN) and the other metrics take one pass.
// CUPTI's set-up (loading it, the chip's metric tables, the configuration image) touches no
// kernel, so it can run on a thread while the GPU is busy with other work; `ready_for_passes`, when
// given, is called before the first GPU-side step and blocks until the GPU may be used, returning
// false to give up (the result then says the profile was not wanted).
// `keep_enabled` leaves the range profiler enabled after a profile that succeeded, so the next one
// in this process skips its first start (140-230 ms with the GPU alone on an H200). Only the GPU's
// one profiling process may ask for it: while it is enabled, every other process's profile (CUPTI's
// or Nsight Compute's) fails with CUPTI_ERROR_HARDWARE_BUSY. It stays enabled until the process
// ends or a profile fails.
ProfileResult profile_with_cupti(int device, const std::vector<ProfiledLaunch>& launches,
                                 const std::function<void()>& flush_l2, int max_passes,
                                 const std::function<bool()>& ready_for_passes = {},
                                 bool sm_throughput = true, bool keep_enabled = false);

// Reads `ncu --csv --metrics ...` output: one KernelMetrics per profiled kernel ID, in ID order.
ProfileResult parse_ncu_csv(const std::string& csv);

void to_json(nlohmann::json& j, const KernelMetrics& metrics);
void from_json(const nlohmann::json& j, KernelMetrics& metrics);

}  // namespace cudojo

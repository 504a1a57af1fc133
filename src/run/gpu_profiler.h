// The GPU's profiling process: one per GPU in a server (WorkerMode::kProfile), shared by the GPU's
// slots, that measures CUPTI's metrics of each correct kernel with the range profiler kept enabled
// from one job to the next.
//
// Why a process of its own: the range profiler's first start after it is enabled takes 140-230 ms
// (more under load), always inside the GPU's turn alone, and a later start of one kept enabled
// takes 6-10 ms (scripts/cupti-session-cost.sh). A check worker cannot keep it enabled: an enabled
// profiler makes every other process's profile fail with CUPTI_ERROR_HARDWARE_BUSY, and a GPU has
// four slots. So one process per GPU does every profile on it, and no check worker enables one.
//
// Who calls whom: a slot's check worker times its kernel with the GPU alone, then sends
// await_profile and waits, holding nothing on the GPU; the parent (run/judge.cc) calls profile()
// with the check's builds, still holding the GPU alone for that slot, so the profiling process's
// launches are the only work on the GPU; then it answers the check worker, which sends its result.
// What the profiling process measured joins that result (merge_profile). Another process's kernels
// never run beside a profile, and the profiler kept enabled does not slow another process's timed
// launches (measured: evidence/2026-12-03-h200-cupti-session-cost-timing-beside.txt).
//
// The process runs learner code, one job after another, so it is kept only as a warm worker is
// (docs/WARM_WORKERS.md): after a clean job (its worker says so and its report shows no fault),
// never after a deadline, a CUDA error or the device heap, and never for more than
// max_jobs_per_worker_set jobs. Nsight Compute (the fallback when CUPTI fails, and hot spots)
// cannot count while the profiler is enabled here: let_go() ends the process first, with the GPU
// alone, and the next profile starts a new one.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/limits.h"
#include "run/gpu_lease.h"
#include "run/process.h"
#include "run/protocol.h"

namespace cudojo {

// What one profile in the GPU's profiling process gave.
struct GpuProfileOutcome {
  // The process's report (metrics, a stale-answer finding, the profile's timings) when it
  // completed; otherwise unset, and `failure` says why.
  std::optional<nlohmann::json> report;
  std::string failure;
  double ms = 0;             // the whole profile as the parent saw it (the slot's turn alone)
  double start_ms = 0;       // of that: starting the process, when none was ready
  bool started_now = false;  // no process was ready: one was started inside the turn alone
  // CUPTI measured nothing and the process could not settle after it: its context broke.
  bool context_broke = false;
  bool kernel_failed = false;   // a profiled launch of the learner's kernel failed
  double retried_after_ms = 0;  // tried again in a fresh process, after this long
};

class GpuProfiler {
 public:
  using Clock = std::chrono::steady_clock;
  // `worker_executable` is started as `<it> worker profile`, with `environment` (the GPU it is
  // pinned to); `limits` bound its start-up, its phases and how many jobs it may take.
  GpuProfiler(std::string worker_executable, WorkerProcess::Environment environment, JudgeLimits limits);
  ~GpuProfiler();
  GpuProfiler(const GpuProfiler&) = delete;
  GpuProfiler& operator=(const GpuProfiler&) = delete;

  // Starts the process ahead when none is running, sharing `lease` while CUDA starts (a start-up is
  // GPU work, which must not run beside another slot's timing). Never call it holding the lease.
  void refill(GpuLease* lease, Clock::time_point deadline);
  // Profiles `job` (a check's job with its builds given; the mode is set here). The caller holds
  // the GPU's lease alone and keeps it until this returns. `reference_ms`, the reference's time per
  // launch the check worker used, sets the profile phase's budget as it would there.
  GpuProfileOutcome profile(Job job, double reference_ms = -1);
  // Ends the process (Nsight Compute is about to count on this GPU, or a job left doubt about the
  // memory of every process that ran its kernel). Call it with the GPU alone or no profile running.
  void let_go();
  // How many processes were started, and whether one is running now (for tests and logs).
  int started_processes();
  bool running();

 private:
  void start_locked();
  GpuProfileOutcome profile_locked(const Job& job, double reference_ms);
  std::mutex mutex_;  // the process; a profile holds it throughout
  std::string executable_;
  WorkerProcess::Environment environment_;
  JudgeLimits limits_;
  std::unique_ptr<WorkerProcess> worker_;
  bool said_ready_ = false;
  int started_ = 0;
  int jobs_ = 0;  // since the process started
};

// Puts what the profiling process measured into the check worker's result message: the metrics
// (the timed figures the check worker measured stay), a finding about the profiled launches, the
// profile's timings. When it measured nothing, the metrics say why, so ncu stands in as it does
// when CUPTI fails in a check worker (run/judge.cc).
void merge_profile(const GpuProfileOutcome& outcome, nlohmann::json& check_result);

}  // namespace cudojo

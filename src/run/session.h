// One worker's run, seen from the parent: hand the job to a started worker, read its messages
// under the deadlines the parent alone keeps, answer its request for the GPU, and return what
// happened as one value. It decides nothing: run/decide turns a SessionResult into a verdict.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "report/report.h"
#include "run/gpu_lease.h"
#include "run/process.h"

namespace cudojo {

struct SessionHooks {
  // Each phase the worker announces ("compiled", "tests", "timing", ...).
  std::function<void(std::string_view phase)> on_progress;
  // The worker's "compiled" message, before any learner code runs.
  std::function<void(const nlohmann::json& compiled)> on_compiled;
  // The worker asks for the GPU to itself before timing. Returns whether it should measure; the
  // worker's deadline does not run while this waits (the tool workers are finishing).
  std::function<bool()> on_await_gpu;
  // The worker (Job::profile_elsewhere) has timed its kernel and waits, holding the GPU alone, for
  // the GPU's profiling process to measure it (run/gpu_profiler.h); called with the reference's
  // time per launch and the worker's message. Its time does not count against the worker's deadline.
  std::function<void(double reference_ms, const nlohmann::json& message)> on_await_profile;
  // The reference's time per launch, when the worker will not say it (the GPU's profiling process
  // is given the check worker's): it sets the budgets of the phases the worker announces.
  double reference_ms = -1;
  // The GPU's lease when other jobs share it (a server's slots): the worker holds it only as its
  // gpu_turn messages ask (shared while its work is on the GPU, alone around each planting), alone
  // from await_gpu to its result to time and profile, and shared while it settles or exits. Null:
  // the GPU is this check's alone (`cudojo check`).
  GpuLease* lease = nullptr;
  // The job asked the worker to stay (Job::keep_alive): after its result the session waits for its
  // "idle" answer, and leaves a reusable worker running.
  bool keep_alive = false;
};

struct SessionResult {
  enum class Ending {
    kResult,    // the worker sent its result
    kDeadline,  // a phase ran past its budget; the worker was killed
    kClosed,    // the worker closed its messages (exited or crashed) without a result
    kMalformed  // the worker sent something that is not a protocol message
  };
  Ending ending = Ending::kClosed;
  bool compiled = false;  // the "compiled" message arrived
  std::string phase = "start-up and compile";
  double budget_ms = 0;                  // the budget of the phase that was running at the end
  double reference_ms = -1;              // the reference's time per launch, once measured
  std::optional<nlohmann::json> result;  // the "result" message
  WorkerProcess::Exit exit;
  CapturedOutput output;
  std::map<std::string, double> timings_ms;  // the parent's view: held_for_tools, worker_exit
  // keep_alive only: the worker settled after a clean job and waits for another; else why not.
  bool reusable = false;
  std::string not_reusable_why;
};

// The parent's side of one worker's turns on a shared GPU (gpu/gpu_turns.h is the worker's side):
// what the worker holds of the lease now, changed as its gpu_turn messages ask. Without a lease
// every request is answered at once and nothing is held.
class WorkerGpuHold {
 public:
  using Clock = std::chrono::steady_clock;
  explicit WorkerGpuHold(GpuLease* lease) : lease_(lease) {}
  // `message` is a gpu_turn: "shared" and "alone" are answered (by `reply_by`) once held so,
  // "none" lets the lease go. Returns the ms spent waiting for the lease.
  double answer(const nlohmann::json& message, WorkerProcess& worker, Clock::time_point reply_by);
  // The lease alone (any hold dropped first: never wait while holding); the ms waited.
  double take_alone();
  // At least shared, for GPU work the parent covers itself (a worker settling or exiting).
  double at_least_shared();
  void release() { hold_.release(); }

 private:
  GpuLease* lease_;
  GpuLease::Hold hold_;
};

// `worker` has been started (perhaps long ago, pre-started) and waits for its job line.
SessionResult run_worker_session(WorkerProcess& worker, const std::string& job_line,
                                 const JudgeLimits& limits, const SessionHooks& hooks);

// After a keep-alive job's result: reads the worker's "idle" answer until `deadline` (killing it
// then). Returns why it cannot take another job, empty when it can (`reusable`).
std::string await_idle(WorkerProcess& worker, std::chrono::steady_clock::time_point deadline, bool& reusable);

// The budget for a phase of `launches` launches, given the reference's time per launch.
double phase_budget_ms(const JudgeLimits& limits, int launches, double reference_ms);

}  // namespace cudojo

// The parent side of a check, the pipeline in one place:
//   start the workers (check worker, and one per sanitizer tool)  -> prepare_workers
//   run the check worker's session; hand the tools the builds when it has compiled, and give it
//   the GPU to itself once they are done                            -> run/session, run/tools
//   the GPU's profiling process, when a server keeps one               -> run/gpu_profiler
//   ncu when CUPTI could not measure                                 -> run/tools
//   the verdict                                                      -> run/decide
// The CLI and the server both call run_check; there is no second implementation of judging.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "report/report.h"
#include "run/build.h"
#include "run/gpu_lease.h"
#include "run/process.h"
#include "stage/stage.h"

namespace cudojo {

class GpuProfiler;
class SanitizerPass;
struct CheckRequest;

// How workers are started; the same for every job of a server slot.
struct WorkerSettings {
  std::string worker_executable;  // the cudojo binary; started as `<it> worker`
  // Extra environment for the workers (the server pins each slot's workers to one GPU this way).
  WorkerProcess::Environment environment;
  JudgeLimits limits = kDefaultLimits;
  // Run compute-sanitizer's racecheck, synccheck and memcheck over one small launch.
  bool sanitize = true;
  std::string sanitizer_executable;  // empty: $CUDOJO_COMPUTE_SANITIZER, PATH, the toolkit's bin/
  // Keep the workers warm across jobs (a server's slot; see PreparedWorkers).
  bool keep_alive = false;
};

// Workers started before their job: each has begun creating its CUDA context (under its tool, for
// the sanitizer workers) and waits for a job line. For `cudojo check` one set serves one check,
// then is gone. A server's slot keeps its set warm (WorkerSettings::keep_alive): after a clean job
// each worker settles and waits for the next; a worker whose job was not clean is let go, and
// refill() starts a new one in its place.
class PreparedWorkers {
 public:
  explicit PreparedWorkers(const WorkerSettings& settings);
  ~PreparedWorkers();
  PreparedWorkers(PreparedWorkers&&) noexcept;
  PreparedWorkers& operator=(PreparedWorkers&&) noexcept;
  // Whether every process is still waiting (a pre-started set can die while it waits).
  bool ready();
  // Waits until every process has finished its CUDA start-up (or ended, or the deadline passed):
  // after that the set does no GPU work until its job arrives.
  void wait_until_started(std::chrono::steady_clock::time_point deadline);
  // Starts a worker in place of each one let go, sharing `lease` (when given) until every one has
  // finished its start-up: a CUDA start-up is GPU work that must not overlap anyone's timing.
  void refill(GpuLease* lease, std::chrono::steady_clock::time_point deadline);
  // Lets every worker go (the job before left doubt about the GPU's memory).
  void discard();
  // After such a job: the check worker goes, and the tool workers that ran its kernel; those that
  // never got it stay (a faulted kernel is not given to racecheck and synccheck, run/judge.cc).
  void discard_those_that_ran_the_job();
  // How many processes of the set were started since it was made (for the report and tests).
  int started_processes() const { return started_processes_; }
  const WorkerSettings& settings() const { return settings_; }
  WorkerProcess& check_worker() { return *check_; }
  SanitizerPass* sanitizers() { return sanitizers_.get(); }

 private:
  friend Report run_check(const CheckRequest& request, PreparedWorkers& workers);
  void start_check_worker();
  WorkerSettings settings_;
  std::unique_ptr<WorkerProcess> check_;
  bool check_said_ready_ = false;
  std::unique_ptr<SanitizerPass> sanitizers_;  // null when not sanitizing
  int started_processes_ = 0;
  int jobs_judged_ = 0;  // since the set was last let go whole
};

struct CheckRequest {
  const Stage* stage = nullptr;
  std::string source;
  std::string file_name = "submission.cu";
  // CUDA C++ is compiled in the worker; Python and Rust by the front end here, while the workers
  // start (compile/frontend.h).
  Language language = Language::kCuda;
  // A build made beforehand (`cudojo build`): nothing is compiled, and its source, file name and
  // language stand for the ones above.
  std::optional<SubmissionBuild> build;
  std::optional<std::string> arch;
  std::optional<std::uint64_t> seed;  // fresh from the OS when unset
  WorkerSettings workers;
  std::string cuda_include_dir;
  // Called with each phase the worker announces ("compiled", "tests", "timing", ...).
  std::function<void(std::string_view phase)> on_progress;
  // Collect profiler metrics (CUPTI, else ncu) for a correct submission and its reference.
  bool profile = true;
  // SM throughput on every stage, not only where the gate reads it (min_sm_throughput_ratio): on an
  // H200 it is 9 of the profiler's 10 passes, each of which has the GPU alone.
  bool all_metrics = false;
  // Where `cudojo calibrate` stored reference figures per GPU model; empty: none.
  std::string calibration_dir;
  // The version of the stage as the caller loaded it (the server: when it loaded the course, so a
  // file changed on disk since is not claimed); unset: computed from the stage's folder now.
  std::optional<StageVersion> stage_version;
  // The arch the first compile aims at while the worker asks the GPU (see Job::arch_guess).
  std::string arch_guess = "sm_90";
  // The GPU's lease when other slots judge on the same GPU (gpu_lease.h); null: the GPU is this
  // check's alone.
  GpuLease* lease = nullptr;
  // The GPU's profiling process (run/gpu_profiler.h), a server's, shared with the GPU's other
  // slots: when given, a correct kernel is profiled there, in its check worker's turn alone; null:
  // the check worker profiles it itself (`cudojo check`).
  GpuProfiler* gpu_profiler = nullptr;
  // Hot spots per source line (run/hot_spots.h) for a kernel that passed the tests, after the
  // verdict is decided; and, when ncu_report_path is set, the whole Nsight Compute report there.
  bool hot_spots = false;
  std::string ncu_report_path;
  // Set by run_check when a report was asked for: whether it was kept, and why not.
  struct NcuReportOutcome {
    bool kept = false;
    std::uint64_t bytes = 0;
    std::string note;
  };
  NcuReportOutcome* ncu_report = nullptr;
};

// Judges one submission. `prepared` (started ahead) must have been made with request.workers;
// without it the workers are started here.
Report run_check(const CheckRequest& request, std::optional<PreparedWorkers> prepared = std::nullopt);
// Judges one submission with a server slot's warm set (made with request.workers and keep_alive),
// which afterwards holds the workers that may take the next job.
Report run_check(const CheckRequest& request, PreparedWorkers& workers);

// Whether a job's report leaves doubt about what its kernel did to the GPU's memory (a fault, a
// write outside its arrays, a kernel stopped at its deadline): then none of its workers is reused.
bool leaves_doubt_about_memory(const Report& report);

// The path of the running executable (/proc/self/exe), for starting workers.
std::string self_executable();

}  // namespace cudojo

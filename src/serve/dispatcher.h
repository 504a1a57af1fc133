// Runs queued jobs: several slots per GPU, each a thread claiming the next job from the Store under
// this node's name and a lease, judging it with run_check and recording the result under that
// claim. Each slot keeps a warm set of workers (the check worker and one per sanitizer tool, each
// with its CUDA context made): a worker whose job was clean takes the next job; one whose job was
// not (a fault, a deadline, the device heap, a write outside its arrays) is let go and replaced
// before the slot claims again. The slots of one GPU share its GpuLease: their compiles, tests and
// sanitized launches overlap, and each timing, profile and shared-memory planting has the GPU
// alone. A worker that crashes or is killed fails only its own job. The leases of jobs are renewed
// by the node's Heartbeat (serve/heartbeat.h).
//
// When the store cannot be reached the slots stop claiming and retry; a job judged meanwhile keeps
// its result in memory and records it once the store answers, unless its lease ran out and another
// node took it, in which case the result is dropped and said so.
//
// A job submitted with "profile" is judged with hot spots (run/hot_spots.h); the Nsight Compute
// report the judge writes to a temporary folder is kept in the store with the job
// (Store::keep_ncu_report, under the same claim, before the result), and the folder removed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/limits.h"
#include "run/gpu_lease.h"
#include "run/gpu_profiler.h"
#include "run/judge.h"
#include "serve/course_catalog.h"
#include "serve/store.h"
#include "stage/stage.h"

namespace cudojo {

class Dispatcher {
 public:
  struct Settings {
    int workers = 1;
    // GPUs the slots are spread over (slot i judges on GPU i mod gpus, seen alone through
    // CUDA_VISIBLE_DEVICES, and shares that GPU's lease); 0: the slots see what the process sees
    // and share one lease.
    int gpus = 0;
    // The GPUs' ids as this process sees them (CUDA_VISIBLE_DEVICES's entries when it is set).
    std::vector<std::string> gpu_ids;
    std::string worker_executable;
    std::string cuda_include_dir;
    std::string calibration_dir;
    bool all_metrics = false;  // SM throughput on every stage, not only where a gate reads it
    int idle_poll_ms = ServeLimits{}.dispatcher_idle_poll_ms;  // see ServeLimits
    int stop_grace_ms = ServeLimits{}.stop_grace_ms;           // see ServeLimits
    double lease_seconds = ServeLimits{}.job_lease_seconds;    // see ServeLimits
    int store_retry_ms = ServeLimits{}.store_retry_ms;         // see ServeLimits
    std::string holder;     // what this process's claims carry: its node name and a random suffix
    std::string node_name;  // this node's name, for reports
    std::string host;       // the machine's name, for reports
    std::string gpu;        // the GPU model its slots judge on ("none" without one), for reports
    // Called (from a slot's thread; it must not block) each time a job's row changed here: taken,
    // a new phase, finished or requeued. The event streams look at once rather than at their poll.
    std::function<void()> on_job_changed;
  };

  Dispatcher(Store& store, CourseCatalog& course, Settings settings);
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void start();
  // Takes no more jobs and gives running ones stop_grace_ms to finish; then kills every worker and
  // compiler sandbox, puts the unfinished jobs back in the queue, and joins the threads.
  void stop();
  // A job was queued: wake an idle slot now rather than at its next poll.
  void notify();
  int workers() const { return settings_.workers; }
  // The claims of the jobs being judged now (for the heartbeat's lease renewals).
  std::vector<JobClaim> running_claims();

 private:
  void run_slot(int slot);
  void run_job(int slot, const JobRecord& job, PreparedWorkers& workers);
  GpuLease& lease_of(int slot) { return *leases_[static_cast<std::size_t>(slot) % leases_.size()]; }
  // The GPU's profiling process of the slot's GPU; null on a node with no GPU.
  GpuProfiler* profiler_of(int slot) {
    return profilers_.empty() ? nullptr
                              : profilers_[static_cast<std::size_t>(slot) % profilers_.size()].get();
  }
  // Records a result under the job's claim, with the Nsight Compute report of a profiled job when
  // one was kept, retrying while the store cannot be reached.
  void record(const JobClaim& claim, const Report& report,
              const std::optional<std::string>& ncu_report = std::nullopt);
  WorkerSettings worker_settings(int slot) const;
  // What pins a process to GPU `gpu` of this node (CUDA_VISIBLE_DEVICES).
  WorkerProcess::Environment gpu_environment(int gpu) const;
  void job_changed() const {
    if (settings_.on_job_changed) settings_.on_job_changed();
  }

  Store& store_;
  CourseCatalog& course_;
  Settings settings_;
  std::vector<std::thread> threads_;
  std::vector<std::string> last_arch_;                   // per slot: the arch its GPU compiled for last
  std::vector<std::unique_ptr<GpuLease>> leases_;        // one per GPU
  std::vector<std::unique_ptr<GpuProfiler>> profilers_;  // one per GPU, beside its lease
  std::atomic<bool> stopping_{false};
  std::atomic<bool> abandoning_{false};  // past the grace: results of killed jobs are not recorded
  std::atomic<int> running_jobs_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable job_ended_;
  std::condition_variable store_retry_;       // record() waits here between tries, apart from wake_
  std::map<std::int64_t, JobClaim> running_;  // by job id, under mutex_
};

}  // namespace cudojo

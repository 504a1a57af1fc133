// The check worker's hardware metrics (CUPTI), set up on a thread during the tests and collected
// once the worker has the GPU alone and has timed the kernel (run/worker.cc).
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include "check/findings.h"
#include "common/environment.h"
#include "contract/driver.h"
#include "measure/profiler.h"
#include "report/report.h"
#include "run/protocol.h"

namespace cudojo {

// Opens once, for good: whether the profiler thread may use the GPU now, or should give up.
class Gate {
 public:
  void open(bool go) {
    {
      std::lock_guard lock(mutex_);
      if (!go_) go_ = go;
    }
    changed_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return go_.has_value(); });
    return *go_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<bool> go_;
};

// Hardware metrics of one launch each of the reference and the submission at the performance
// size, with CUPTI in this process (its context and modules are already loaded). CUPTI's set-up
// runs on a thread from the start of the tests; its replayed launches wait behind the gate, which
// the worker opens once it has the GPU to itself and has timed the kernel. A failure is a note;
// the parent then tries ncu. With the reference's figures from this GPU's calibration, only the
// submission is replayed: each pass holds the GPU alone, and the reference's launch and cache flush
// were half of it.
class BackgroundProfile {
 public:
  using Clock = std::chrono::steady_clock;
  BackgroundProfile(const Job& job, ContractContext& context, ContractDriver& driver,
                    std::optional<KernelMetrics> calibrated_reference)
      : calibrated_reference_(calibrated_reference), keep_enabled_(job.mode == WorkerMode::kProfile) {
    // CUDOJO_PROFILER=ncu skips CUPTI, so the parent measures with ncu: how the two collectors are
    // compared (scripts/metrics-check.sh).
    if (const char* forced = std::getenv(env::kProfiler); forced && std::string(forced) == "ncu") {
      skipped_ = fmt::format("CUPTI skipped ({}=ncu)", env::kProfiler);
      return;
    }
    const std::int64_t n = job.stage.contract == "counter" ? 0 : job.stage.performance_size;
    profile_ = [this, &context, &driver, n, passes = job.profiler_max_passes, sm = job.profile_sm_throughput,
                keep_enabled = keep_enabled_](const std::function<bool()>& ready_for_passes) {
      std::vector<ProfiledLaunch> launches;
      if (!calibrated_reference_) {
        launches.push_back([&, n](const LaunchMarks& marks) {
          driver.launch_once_for_tools(context, n, context.reference, marks);
        });
      }
      launches.push_back([&, n](const LaunchMarks& marks) {
        driver.launch_once_for_tools(context, n, context.submission, marks);
        // Every replayed launch is judged, so a kernel cannot look efficient only when no answer
        // is read.
        ++profiled_launches_;
        if (driver.tool_answer_right(context) == false) ++wrong_profiled_launches_;
      });
      return profile_with_cupti(
          0, launches, [&] { context.gpu.flush_l2(); }, passes, ready_for_passes, sm, keep_enabled);
    };
    // Reaching the gate means CUPTI's set-up is done; collect() waits for that, within a bound.
    result_ = std::async(std::launch::async, [this] {
      return profile_([this] {
        set_up_ = true;
        return gate_.wait();
      });
    });
  }
  // Never leaves the thread waiting: a check that ends early (a fault, a wrong answer) cancels it.
  ~BackgroundProfile() {
    gate_.open(false);
    if (result_.valid()) result_.wait();
  }
  BackgroundProfile(const BackgroundProfile&) = delete;
  BackgroundProfile& operator=(const BackgroundProfile&) = delete;

  // Runs the replayed launches now and fills the report's metrics. CUPTI's set-up gets at most
  // `setup_wait_ms` more: past that the parent measures with ncu instead, rather than the kernel
  // running into its time limit over the judge's own tool.
  void collect(Report& report, double setup_wait_ms, PhaseAnnouncer& announce, int max_passes) {
    if (!result_.valid()) {
      report.metrics.metrics_note = skipped_;
      return;
    }
    const auto give_up =
        Clock::now() + std::chrono::microseconds(static_cast<long long>(setup_wait_ms * 1000));
    while (!set_up_ && result_.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
      if (Clock::now() >= give_up) {
        gate_.open(false);
        report.metrics.metrics_note =
            fmt::format("CUPTI: its set-up took longer than {:.0f} ms", setup_wait_ms);
        return;
      }
    }
    // Each pass replays each kernel once.
    announce.phase("profile", (calibrated_reference_ ? 1 : 2) * max_passes);
    gate_.open(true);
    ProfileResult result = result_.get();
    // The counters were another process's when the set-up ran during the tests (it was in its
    // profiling passes).
    const bool counters_were_busy =
        !result.ok && profiled_launches_ == 0 && result.error.find("HARDWARE_BUSY") != std::string::npos;
    // The GPU's profiling process: a profile failed while nothing of this process's did (on the
    // H200 a pass's start or stop answered CUPTI_ERROR_UNKNOWN just after another process's kernel
    // faulted, with the profiler kept enabled or enabled anew). The failure has disabled it, and
    // enabled anew it measures. (A failed CUPTI call may leave an error CUDA reports once; only one
    // that stays, a fault of this process's own, keeps it from trying again.)
    auto nothing_of_this_process_failed = [] {
      cudaGetLastError();
      return cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess;
    };
    const bool profiling_process_failed =
        !result.ok && keep_enabled_ && !counters_were_busy && nothing_of_this_process_failed();
    if (counters_were_busy || profiling_process_failed) {
      // This process has the GPU alone now: one more try costs a set-up (and the profiler's first
      // start), where ncu would cost seconds of the GPU alone. It is a phase of its own, with its
      // own budget, so the judge's retry never eats into the learner's.
      const std::string first_error = result.error;
      announce.phase("profile_retry", (calibrated_reference_ ? 1 : 2) * max_passes);
      result = profile_(nullptr);
      report.timings_ms["profile_retry"] = result.setup_ms + result.passes_ms;
      if (!result.ok) result.error = fmt::format("{} (then, tried again: {})", first_error, result.error);
    }
    report.timings_ms["profile_setup"] = result.setup_ms;
    report.timings_ms["profile_passes"] = result.passes_ms;
    report.timings_ms["profile_enable"] = result.enable_ms;
    report.timings_ms["profile_first_pass"] = result.first_pass_ms;
    report.timings_ms["profile_first_launches"] = result.first_launches_ms;
    report.timings_ms["profile_starts"] = result.starts_ms;
    report.timings_ms["profile_launches"] = result.launches_ms;
    report.timings_ms["profile_stops"] = result.stops_ms;
    report.timings_ms["profile_decode"] = result.decode_ms;
    fill(result, calibrated_reference_, report);
    if (result.ok && !result.sm_throughput) {
      report.metrics.metrics_note +=
          std::string(report.metrics.metrics_note.empty() ? "" : "; ") + kSmThroughputNotMeasured;
    }
    if (wrong_profiled_launches_ > 0) {
      report.findings.push_back(
          {std::string(finding_code::kStaleAnswer),
           fmt::format("{} of the {} launches the profiler replayed answered wrong, though the tests and "
                       "the timed launches were right: every launch is judged, including those "
                       "measured for the hardware metrics, so a kernel must do the same work each time",
                       wrong_profiled_launches_.load(), profiled_launches_.load()),
           std::nullopt});
    }
  }

 private:
  static void fill(const ProfileResult& result, const std::optional<KernelMetrics>& calibrated_reference,
                   Report& report) {
    report.metrics.metrics_passes = result.passes;
    const std::size_t kernels = calibrated_reference ? 1 : 2;
    if (result.ok && result.kernels.size() >= kernels) {
      report.metrics.reference_kernel = calibrated_reference ? *calibrated_reference : result.kernels[0];
      report.metrics.kernel = result.kernels[kernels - 1];
      report.metrics.metrics_source = "cupti";
      report.metrics.metrics_note = result.error;  // metrics CUPTI refused, if any
      if (calibrated_reference) {
        report.metrics.metrics_note += std::string(result.error.empty() ? "" : "; ") +
                                       "the reference's figures are this GPU's calibrated ones";
      }
    } else {
      report.metrics.metrics_source = "";
      report.metrics.metrics_note = "CUPTI: " + (result.error.empty() ? "no kernels profiled" : result.error);
    }
  }

  Gate gate_;
  std::atomic<bool> set_up_{false};
  std::atomic<int> profiled_launches_{0};
  std::atomic<int> wrong_profiled_launches_{0};
  std::function<ProfileResult(const std::function<bool()>&)> profile_;
  std::future<ProfileResult> result_;
  std::string skipped_;
  std::optional<KernelMetrics> calibrated_reference_;
  bool keep_enabled_ = false;  // the GPU's profiling process keeps the profiler enabled between jobs
};

}  // namespace cudojo

#include "run/worker_gpu.h"

#include <fmt/format.h>

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compile/ptx_planting.h"
#include "contract/driver.h"
#include "gate/calibration.h"
#include "gpu/gpu_turns.h"
#include "run/tool_marks.h"
#include "run/worker_profile.h"

namespace cudojo {

namespace {

void fill_metrics(const ContractOutcome& outcome, const GpuInfo& gpu, Metrics& metrics) {
  metrics.n = outcome.timed_n;
  metrics.time_ms = outcome.submission_time;
  metrics.reference_time_ms = outcome.reference_time;
  if (outcome.submission_time && outcome.reference_time && outcome.reference_time->median_ms > 0) {
    metrics.time_ratio = outcome.submission_time->median_ms / outcome.reference_time->median_ms;
  }
  if (outcome.baseline_time) {
    metrics.baseline_name = outcome.baseline_name;
    metrics.baseline_time_ms = outcome.baseline_time;
    if (outcome.submission_time && outcome.baseline_time->median_ms > 0) {
      metrics.baseline_ratio = outcome.submission_time->median_ms / outcome.baseline_time->median_ms;
    }
  }
  if (outcome.submission_time && outcome.bytes_read_per_launch > 0 &&
      outcome.submission_time->median_ms > 0) {
    metrics.bandwidth_gbps =
        outcome.bytes_read_per_launch / (outcome.submission_time->median_ms * 1e-3) / 1e9;
    if (gpu.peak_read_gbps > 0) metrics.pct_of_peak = 100.0 * *metrics.bandwidth_gbps / gpu.peak_read_gbps;
  } else if (outcome.submission_time) {
    metrics.note = "this contract reads no input array, so bandwidth is not reported";
  }
}

// This GPU's calibrated figures for the job's stage at its size (gate/calibration.h), if any.
std::optional<StageCalibration> calibrated_stage(const Job& job, const GpuInfo& gpu) {
  if (job.calibration_dir.empty()) return std::nullopt;
  CalibrationLookup lookup;
  try {
    lookup = look_up_calibration(job.calibration_dir, gpu.name, job.stage.id);
  } catch (const std::exception&) {
    return std::nullopt;  // an unreadable folder: measured here, as without a calibration
  }
  if (!lookup.calibration) return std::nullopt;
  const StageCalibration* stage =
      calibrated_stage_at(*lookup.calibration, job.stage.id, job.stage.performance_size);
  if (!stage) return std::nullopt;
  return *stage;
}

// The reference's time per launch sets the phases' budgets only (phase_launch_factor, 2000 times it
// per launch, over a floor of 3 s: far more than other jobs sharing the GPU can slow a launch).
// Measuring it costs a full-size input (up to 2^26 values made and copied) and five launches, a
// good part of a second on the largest stages, so it is read from this GPU's calibration when that
// has the stage at the same size, and otherwise measured once per warm worker, stage, launch and
// reference build.
double reference_time_per_launch(const Job& job, const Builds& builds, ContractDriver& driver,
                                 ContractContext& context,
                                 const std::optional<StageCalibration>& calibrated) {
  if (calibrated && calibrated->reference_time_ms.median_ms > 0)
    return calibrated->reference_time_ms.median_ms;
  static std::map<std::string, double> measured;
  const std::string image(builds.reference.image.begin(), builds.reference.image.end());
  const auto& launch = job.stage.launch;
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}", job.stage.id, job.stage.contract, job.stage.performance_size,
                  launch.threads_per_block, launch.dynamic_shared_bytes, launch.fixed_blocks.value_or(0),
                  std::hash<std::string>{}(image));
  if (auto found = measured.find(key); found != measured.end()) return found->second;
  const double ms = driver.time_reference(context);
  measured.emplace(key, ms);
  return ms;
}

// The planted build of one learner kernel, attached to it; false when there is none to attach: no
// PTX (a cubin from `cudojo build`), PTX the rewrite does not read, or a build the driver refuses.
bool attach_planted_build(const CompileResult& built, int dynamic_shared_bytes, LoadedKernel& kernel) {
  if (built.ptx.empty()) return false;
  auto planted = make_planted_build(built.ptx);
  if (!planted) return false;
  std::vector<char> image(planted->ptx.begin(), planted->ptx.end());
  image.push_back('\0');
  try {
    kernel.plant_through(
        std::make_unique<LoadedKernel>(image, built.lowered_name, dynamic_shared_bytes, built.abi));
  } catch (const CudaError&) {
    cudaGetLastError();  // a load error is not sticky; the old planting still works
    return false;
  }
  return true;
}

// The tests' plantings go through the learner's kernels themselves when every one of them has a
// planted build: then no test asks for the GPU alone. A kernel that prints keeps the old planting
// (its first launch must print as written, and its later ones run the quiet build).
void plant_through_learner_kernels(const Job& job, GpuSession& gpu, const Builds& builds,
                                   LoadedKernel& submission, LoadedKernel* second_submission) {
  const int shared_bytes = job.stage.launch.dynamic_shared_bytes;
  if (!gpu.plants_shared_memory()) return;  // nothing to plant: no build to make and load
  if (builds.quiet.ok || !attach_planted_build(builds.submission, shared_bytes, submission)) return;
  std::vector<const LoadedKernel*> kernels{&submission};
  if (second_submission) {
    if (!attach_planted_build(builds.second_submission, shared_bytes, *second_submission)) return;
    kernels.push_back(second_submission);
  }
  gpu.plant_through(std::move(kernels));
}

}  // namespace

void run_on_gpu(const Job& job, GpuSession& gpu, const Builds& builds, LoadedKernel& submission,
                StepClock& clock, Report& report) {
  PipeAnnouncer announce;
  auto driver = make_contract_driver(job.stage.contract);
  const int shared_bytes = job.stage.launch.dynamic_shared_bytes;
  std::unique_ptr<LoadedKernel> second_submission, second_reference;
  if (builds.second_submission.ok) {
    try {
      second_submission = std::make_unique<LoadedKernel>(builds.second_submission.image,
                                                         builds.second_submission.lowered_name, shared_bytes,
                                                         builds.second_submission.abi);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), fmt::format("the second kernel, {}, could not be loaded: {}",
                                                   job.stage.second_kernel, error.what()));
    }
  }
  if (builds.second_reference.ok) {
    second_reference =
        std::make_unique<LoadedKernel>(builds.second_reference.image, builds.second_reference.lowered_name,
                                       shared_bytes, builds.second_reference.abi);
  }
  if (job.mode == WorkerMode::kSanitize) {
    // The submission stands in for the reference: nothing but the one launch runs.
    ContractContext context{job.stage,
                            gpu,
                            submission,
                            submission,
                            job.seed,
                            announce,
                            second_submission.get(),
                            second_submission.get()};
    driver->launch_once_for_tools(context, job.tool_size, submission, {});
    clock.step("launch");
    // A kept tool writes every job's findings into one log: the mark ends this job's part.
    if (job.keep_alive) leave_tool_log_mark(gpu);
    send_result(outcome::kCompleted, report);
    return;
  }
  LoadedKernel reference(builds.reference.image, builds.reference.lowered_name, shared_bytes);
  ContractContext context{job.stage,
                          gpu,
                          submission,
                          reference,
                          job.seed,
                          announce,
                          second_submission.get(),
                          second_reference.get()};
  clock.step("load");
  if (job.mode == WorkerMode::kLaunchForNcu) {
    // ncu flushes the caches itself before each kernel it profiles.
    const std::int64_t n = job.stage.contract == "counter" ? 0 : job.stage.performance_size;
    if (!job.launch_submission_only) driver->launch_once_for_tools(context, n, reference, {});
    driver->launch_once_for_tools(context, n, submission, {});
    send_result(outcome::kCompleted, report);
    return;
  }
  // The reference's figures this GPU's calibration has need not be measured again per job.
  const std::optional<StageCalibration> calibrated = calibrated_stage(job, gpu.info());
  if (job.mode == WorkerMode::kProfile) {
    // The GPU's profiling process: the parent holds the GPU alone for the slot whose check worker
    // has just timed this kernel. The range profiler stays enabled for the next job.
    BackgroundProfile profile(job, context, *driver,
                              calibrated ? calibrated->reference_metrics : std::nullopt);
    profile.collect(report, job.profiler_setup_wait_ms, announce, job.profiler_max_passes);
    clock.step("profile");
    send_result(outcome::kCompleted, report);
    return;
  }

  plant_through_learner_kernels(job, gpu, builds, submission, second_submission.get());
  if (gpu.plants_through_kernels()) clock.step("load_planted");
  std::optional<BackgroundProfile> profile;
  if (job.profile && !job.profile_elsewhere)
    profile.emplace(job, context, *driver, calibrated ? calibrated->reference_metrics : std::nullopt);
  ContractOutcome outcome;
  if (job.stage.deterministic) add_float_atomic_findings(job, builds, outcome.findings);
  try {
    announce.reference_time(reference_time_per_launch(job, builds, *driver, context, calibrated));
    clock.step("reference_time");
    driver->run_tests(context, outcome);
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    report.determinism = outcome.determinism;
    clock.step("tests");
    check_counted_build(job, gpu, *driver, builds.counted, second_submission.get(), announce, report);
    clock.step("barrier_check");
  } catch (...) {
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    throw;
  }
  if (!is_correct(report.tests, report.findings)) {
    report.metrics.note = "not timed: the submission is not correct yet";
    send_result(outcome::kCompleted, report);
    return;
  }
  // Nothing of this job's is left on the GPU when the parent takes the lease for it alone.
  gpu.sync_judge();
  gpu_turns::give_back();
  const bool measure = await_gpu();
  if (measure) gpu_turns::measuring();
  clock.step("wait_for_gpu");
  if (!measure) {
    report.metrics.note = "not timed: the submission is not correct yet";
    send_result(outcome::kCompleted, report);
    return;
  }
  gpu.measure_peak_read_gbps();
  report.gpu = gpu.info();
  clock.step("peak_probe");
  driver->measure(context, outcome);
  fill_metrics(outcome, gpu.info(), report.metrics);
  clock.step("timing");
  // The timed launches are checked too (a kernel answering from an earlier launch): what they
  // found joins the tests' findings, and such a kernel is not profiled.
  report.findings = outcome.findings.finish();
  if (profile && is_correct(report.tests, report.findings)) {
    profile->collect(report, job.profiler_setup_wait_ms, announce, job.profiler_max_passes);
    clock.step("profile");
  } else if (job.profile && job.profile_elsewhere && is_correct(report.tests, report.findings)) {
    // Nothing of this worker's runs while the GPU's profiling process measures the kernel.
    gpu.sync_judge();
    await_profile(report.metrics.time_ratio);
    clock.step("profile");
  }
  send_result(outcome::kCompleted, report);
}

}  // namespace cudojo

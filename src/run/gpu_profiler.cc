#include "run/gpu_profiler.h"

#include <fmt/format.h>

#include <utility>

#include "common/json_text.h"
#include "run/session.h"
#include "run/tools.h"

namespace cudojo {

namespace {

using Clock = GpuProfiler::Clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Clock::time_point after_ms(double ms) {
  return Clock::now() + std::chrono::microseconds(static_cast<long long>(ms * 1000));
}

// Why a profile gave no report, in the words a metrics note uses.
std::string why_no_report(const SessionResult& session) {
  switch (session.ending) {
    case SessionResult::Ending::kDeadline:
      return fmt::format("the kernel was still running {:.0f} ms into its profile, so it was stopped",
                         session.budget_ms);
    case SessionResult::Ending::kClosed:
      return fmt::format("the process ended during the profile ({})", session.exit.describe());
    case SessionResult::Ending::kMalformed:
      return "the process sent something that is not a protocol message";
    case SessionResult::Ending::kResult:
      break;
  }
  const auto& report = session.result->value("report", nlohmann::json::object());
  const auto& message = report.is_object() ? report.value("message", nlohmann::json("")) : nlohmann::json("");
  return fmt::format("the profile ended {}{}{}", session.result->value("outcome", "?"),
                     message.is_string() && !message.get<std::string>().empty() ? ": " : "",
                     message.is_string() ? message.get<std::string>() : "");
}

}  // namespace

GpuProfiler::GpuProfiler(std::string worker_executable, WorkerProcess::Environment environment,
                         JudgeLimits limits)
    : executable_(std::move(worker_executable)), environment_(std::move(environment)), limits_(limits) {}

GpuProfiler::~GpuProfiler() = default;

void GpuProfiler::start_locked() {
  worker_ = std::make_unique<WorkerProcess>(
      std::vector<std::string>{executable_, "worker", std::string(to_string(WorkerMode::kProfile))},
      limits_.max_output_bytes, environment_);
  said_ready_ = false;
  jobs_ = 0;
  ++started_;
}

void GpuProfiler::refill(GpuLease* lease, Clock::time_point deadline) {
  {
    std::lock_guard lock(mutex_);
    if (worker_ && worker_->running()) return;
  }
  // Shared, taken before the process's lock: a profile runs only with the GPU alone, so while this
  // is held no profile can be waiting for the lock (and no one waits for the lease holding it).
  GpuLease::Hold hold;
  if (lease) hold = lease->share();
  std::lock_guard lock(mutex_);
  try {
    if (!worker_ || !worker_->running()) start_locked();
    if (!said_ready_) said_ready_ = wait_for_ready(*worker_, deadline);
  } catch (const std::exception&) {
    // Not started ahead: the next profile starts one itself, or says in its note why it could not.
    // The slot's own workers are not the profiler's to lose over this.
    worker_.reset();
  }
}

GpuProfileOutcome GpuProfiler::profile(Job job, double reference_ms) {
  const auto started = Clock::now();
  job.mode = WorkerMode::kProfile;
  // Its work on the GPU is covered by the slot's turn alone, which the caller holds: it asks for
  // no turns of its own.
  job.gpu_turns = false;
  job.profile = true;
  job.profile_elsewhere = false;
  std::lock_guard lock(mutex_);
  GpuProfileOutcome outcome = profile_locked(job, reference_ms);
  // On the H200 another process's kernel faulting while this one's profiler was enabled broke this
  // one's context: its next profile failed in CUPTI (no fault of the learner's kernel, whose
  // launches then go on right) and the process could not settle. A fresh process measures; one
  // more try costs its start-up, where ncu would cost seconds of the GPU alone.
  if (outcome.context_broke && !outcome.kernel_failed) {
    const double first_ms = ms_since(started);
    GpuProfileOutcome again = profile_locked(job, reference_ms);
    again.retried_after_ms = first_ms;
    outcome = std::move(again);
  }
  outcome.ms = ms_since(started);
  return outcome;
}

GpuProfileOutcome GpuProfiler::profile_locked(const Job& job, double reference_ms) {
  const auto started = Clock::now();
  GpuProfileOutcome outcome;
  try {
    if (!worker_ || !worker_->running()) {
      start_locked();
      outcome.started_now = true;
    }
  } catch (const std::exception& error) {
    worker_.reset();
    outcome.failure = fmt::format("the GPU's profiling process could not be started: {}", error.what());
    return outcome;
  }
  if (!said_ready_) said_ready_ = wait_for_ready(*worker_, after_ms(limits_.startup_budget_ms));
  outcome.start_ms = ms_since(started);
  SessionHooks hooks;
  hooks.keep_alive = job.keep_alive;
  hooks.reference_ms = reference_ms;  // the profile phase's budget, as in the check worker
  const SessionResult session = run_worker_session(*worker_, json_text(nlohmann::json(job)), limits_, hooks);
  ++jobs_;
  const bool completed = session.ending == SessionResult::Ending::kResult && session.result &&
                         session.result->value("outcome", "") == outcome::kCompleted;
  if (completed) {
    const auto& report = session.result->value("report", nlohmann::json::object());
    if (report.is_object()) outcome.report = report;
  }
  if (!outcome.report) outcome.failure = "the GPU's profiling process: " + why_no_report(session);
  if (outcome.report) {
    const auto& metrics = outcome.report->value("metrics", nlohmann::json::object());
    const std::string source = metrics.is_object() ? metrics.value("metrics_source", "") : "";
    const std::string note = metrics.is_object() ? metrics.value("metrics_note", "") : "";
    outcome.context_broke = source.empty() && job.keep_alive && !session.reusable;
    outcome.kernel_failed = note.find("a profiled kernel failed") != std::string::npos;
  }
  // Kept only after a clean job, as a warm worker is, and not for ever.
  if (!session.reusable || !completed || jobs_ >= limits_.max_jobs_per_worker_set) worker_.reset();
  return outcome;
}

void GpuProfiler::let_go() {
  std::lock_guard lock(mutex_);
  worker_.reset();  // killed and reaped: its profiler is the driver's to release by then
}

int GpuProfiler::started_processes() {
  std::lock_guard lock(mutex_);
  return started_;
}

bool GpuProfiler::running() {
  std::lock_guard lock(mutex_);
  return worker_ && worker_->running();
}

void merge_profile(const GpuProfileOutcome& outcome, nlohmann::json& check_result) {
  if (!check_result.is_object()) return;
  auto& report = check_result["report"];
  if (!report.is_object()) return;
  auto& metrics = report["metrics"];
  if (!metrics.is_object()) metrics = nlohmann::json::object();
  auto& timings = report["timings_ms"];
  if (!timings.is_object()) timings = nlohmann::json::object();
  if (outcome.report) {
    const auto& measured = outcome.report->value("metrics", nlohmann::json::object());
    for (const char* key :
         {"sm_throughput_pct", "dram_throughput_pct", "global_atomics", "kernel_duration_ms",
          "reference_sm_throughput_pct", "reference_dram_throughput_pct", "reference_global_atomics",
          "reference_kernel_duration_ms", "metrics_source", "metrics_note", "metrics_passes"}) {
      if (measured.is_object() && measured.contains(key))
        metrics[key] = measured.at(key);
      else
        metrics.erase(key);
    }
    // A profiled launch that answered wrong is a finding about the kernel, wherever it ran.
    const auto& findings = outcome.report->value("findings", nlohmann::json::array());
    if (findings.is_array() && !findings.empty()) {
      if (!report["findings"].is_array()) report["findings"] = nlohmann::json::array();
      for (const auto& finding : findings) report["findings"].push_back(finding);
    }
    const auto& steps = outcome.report->value("timings_ms", nlohmann::json::object());
    if (steps.is_object()) {
      for (const auto& [step, ms] : steps.items()) {
        if (step.rfind("profile_", 0) == 0 && ms.is_number()) timings[step] = ms;
      }
    }
  } else {
    metrics["metrics_source"] = "";
    metrics["metrics_note"] = outcome.failure;
  }
  timings["gpu_profiler"] = outcome.ms;
  if (outcome.retried_after_ms > 0) timings["gpu_profiler_retry"] = outcome.ms - outcome.retried_after_ms;
  if (outcome.started_now) timings["gpu_profiler_start"] = outcome.start_ms;
}

}  // namespace cudojo

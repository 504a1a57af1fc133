#include "run/judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <set>

#include "check/findings.h"
#include "check/sanitizer.h"
#include "common/environment.h"
#include "common/json_text.h"
#include "gate/gate.h"
#include "run/decide.h"
#include "run/gpu_profiler.h"
#include "run/hot_spots.h"
#include "run/judge_internal.h"
#include "run/protocol.h"
#include "run/session.h"
#include "run/stage_version.h"
#include "run/tools.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

Job make_job(const CheckRequest& request, std::uint64_t seed) {
  Job job;
  job.stage = *request.stage;
  job.source = request.source;
  job.file_name = request.file_name;
  job.language = request.language;
  job.reference_source = request.stage->reference_source;
  job.arch = request.arch;
  job.arch_guess = request.arch_guess;
  job.cuda_include_dir = request.cuda_include_dir;
  job.seed = seed;
  job.max_log_bytes = request.workers.limits.max_compile_log_bytes;
  job.tool_size = request.workers.limits.sanitize_size;
  // CUPTI and ncu name one submission kernel and one reference kernel; a two-kernel stage is
  // judged on time alone.
  job.profile = request.profile && request.stage->second_kernel.empty();
  job.profiler_max_passes = request.workers.limits.profiler_max_passes;
  job.profile_sm_throughput = request.all_metrics || request.stage->gate.min_sm_throughput_ratio.has_value();
  job.profiler_setup_wait_ms = request.workers.limits.profiler_setup_wait_ms;
  job.calibration_dir = request.calibration_dir;
  return job;
}

// The check worker's builds, for the tool workers to load instead of compiling again; a build
// that does not decode is simply compiled again there.
void take_builds(const nlohmann::json& compiled, Job& tool_job) {
  const auto& builds = compiled.value("builds", nlohmann::json::object());
  try {
    if (builds.contains("submission")) tool_job.submission_build = builds.at("submission").get<BuiltKernel>();
    if (builds.contains("reference")) tool_job.reference_build = builds.at("reference").get<BuiltKernel>();
    if (builds.contains("second_submission"))
      tool_job.second_submission_build = builds.at("second_submission").get<BuiltKernel>();
    if (builds.contains("second_reference"))
      tool_job.second_reference_build = builds.at("second_reference").get<BuiltKernel>();
  } catch (const std::exception&) {
    tool_job.submission_build.reset();
    tool_job.reference_build.reset();
    tool_job.second_submission_build.reset();
    tool_job.second_reference_build.reset();
  }
  const auto& compile = compiled.value("compile", nlohmann::json::object());
  if (compile.contains("arch") && compile.at("arch").is_string())
    tool_job.arch = compile.at("arch").get<std::string>();
}

bool completed(const SessionResult& session) {
  return session.ending == SessionResult::Ending::kResult && session.result &&
         session.result->value("outcome", "") == outcome::kCompleted;
}

bool faulted(const SessionResult& session) {
  return session.ending == SessionResult::Ending::kResult && session.result &&
         session.result->value("outcome", "") == outcome::kRuntimeError;
}

// Whether the worker's report says CUPTI measured both kernels; if not, why not.
std::optional<std::string> cupti_failure(const SessionResult& session) {
  const auto& report = session.result->value("report", nlohmann::json::object());
  const auto& metrics = report.value("metrics", nlohmann::json::object());
  if (!report.value("tests", nlohmann::json::array()).size()) return std::nullopt;
  // Its timed launches were found wrong (an answer kept from an earlier launch): it is not
  // profiled, by CUPTI or by ncu, which would hold the GPU alone for seconds for nothing.
  if (!report.value("findings", nlohmann::json::array()).empty()) return std::nullopt;
  if (metrics.value("metrics_source", "") == "cupti") return std::nullopt;
  if (!metrics.contains("time_ms") || metrics.at("time_ms").is_null()) return std::nullopt;  // never measured
  return metrics.value("metrics_note", std::string("CUPTI: the check worker sent no metrics"));
}

}  // namespace

ToolSettings tool_settings(const WorkerSettings& settings) {
  ToolSettings tools;
  tools.worker_executable = settings.worker_executable;
  tools.environment = settings.environment;
  tools.limits = settings.limits;
  tools.keep_alive = settings.keep_alive;
  tools.sanitizer_executable = settings.sanitizer_executable.empty()
                                   ? find_cuda_tool("compute-sanitizer", env::kComputeSanitizer)
                                   : settings.sanitizer_executable;
  return tools;
}

namespace {

// An oversize source ends the check before anything is piped anywhere, or any worker started.
std::optional<Report> refused_as_too_large(const CheckRequest& request, std::uint64_t seed) {
  const auto too_large = source_size_error(request.source.size(), request.workers.limits);
  if (!too_large) return std::nullopt;
  Report report;
  report.stage = request.stage->id;
  report.file = request.file_name;
  report.language = std::string(to_string(request.language));
  report.seed = seed;
  report.verdict = Verdict::kCompileError;
  report.message = "the submission is too large";
  report.compile.log = fmt::format("{}: {}", request.file_name, *too_large);
  report.compile.diagnostics.push_back({request.file_name, 0, "error", *too_large});  // names it once
  report.stage_version = request.stage_version
                             ? *request.stage_version
                             : compute_stage_version(*request.stage, request.calibration_dir);
  return report;
}

}  // namespace

Report run_check(const CheckRequest& request, std::optional<PreparedWorkers> prepared) {
  if (auto refused = refused_as_too_large(request, request.seed.value_or(fresh_seed()))) return *refused;
  if (!prepared || !prepared->ready()) prepared.emplace(request.workers);
  return run_check(request, *prepared);
}

bool leaves_doubt_about_memory(const Report& report) {
  switch (report.verdict) {
    case Verdict::kRuntimeError:
    case Verdict::kTimeLimitExceeded:
    case Verdict::kInternalError:
    case Verdict::kNoDevice:
      return true;
    default:
      break;
  }
  for (const auto& finding : report.findings) {
    if (finding.code == finding_code::kOutOfBounds || finding.code == finding_code::kInputModified)
      return true;
  }
  return report.sanitizer.tools.end() !=
         std::find_if(report.sanitizer.tools.begin(), report.sanitizer.tools.end(),
                      [](const auto& tool) { return tool.tool == "memcheck" && tool.errors > 0; });
}

// Hot spots come after the verdict, and only for a kernel that passed the tests: nothing they find
// or fail to find changes it.
static void add_hot_spots(const CheckRequest& request, const Job& tool_job, Report& report,
                          const std::function<void()>& free_counters) {
  if (report.verdict != Verdict::kAccepted && report.verdict != Verdict::kTooSlow) {
    report.hot_spots = HotSpots{};
    report.hot_spots->note = "hot spots are shown for a kernel that passed the tests (accepted or too slow)";
    if (request.ncu_report) request.ncu_report->note = report.hot_spots->note;
    return;
  }
  if (request.on_progress) request.on_progress("hot spots (ncu)");
  const HotSpotsResult found = collect_hot_spots(
      tool_settings(request.workers), {tool_job, request.ncu_report_path, request.lease, free_counters});
  report.hot_spots = found.hot_spots;
  report.timings_ms["hot_spots"] = found.hot_spots.ms;
  if (request.ncu_report) *request.ncu_report = {found.report_kept, found.report_bytes, found.report_note};
}

Report run_check(const CheckRequest& request, PreparedWorkers& prepared_workers) {
  PreparedWorkers* prepared = &prepared_workers;
  const auto started = Clock::now();
  const Stage& stage = *request.stage;
  const std::uint64_t seed = request.seed.value_or(fresh_seed());
  auto finish = [&](Report report) {
    report.stage_version = request.stage_version ? *request.stage_version
                                                 : compute_stage_version(stage, request.calibration_dir);
    report.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    report.timings_ms["total"] = report.wall_ms;
    return report;
  };
  // A check that ends before any worker runs (too large, not compiled).
  auto ended_early = [&](Verdict verdict, const std::string& file, Language language, std::string message) {
    Report report;
    report.stage = stage.id;
    report.file = file;
    report.language = std::string(to_string(language));
    report.seed = seed;
    report.verdict = verdict;
    report.message = std::move(message);
    return report;
  };

  if (auto refused = refused_as_too_large(request, seed)) return finish(*refused);

  if (!prepared->ready())
    prepared->refill(request.lease, Clock::now() + std::chrono::milliseconds(static_cast<long long>(
                                                       request.workers.limits.startup_budget_ms)));
  const double start_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  Job job = make_job(request, seed);

  // Python and Rust are compiled here, in the sandbox, while the workers start CUDA.
  std::optional<SubmissionBuild> build = request.build;
  if (!build && request.language != Language::kCuda) {
    if (request.on_progress) request.on_progress("compile");
    BuildRequest build_request;
    build_request.stage = &stage;
    build_request.language = request.language;
    build_request.source = request.source;
    build_request.file_name = request.file_name;
    build_request.arch = request.arch.value_or(request.arch_guess);
    build_request.cuda_include_dir = request.cuda_include_dir;
    build_request.limits = request.workers.limits;
    try {
      build = build_submission(build_request);
    } catch (const std::exception& error) {
      return finish(ended_early(
          Verdict::kInternalError, request.file_name, request.language,
          fmt::format("the {} compiler could not be run: {}", display_name(request.language), error.what())));
    }
  }
  if (build) {
    if (!build->compile.ok) {
      Report report = ended_early(Verdict::kCompileError, build->file_name, build->language,
                                  "the submission did not compile");
      report.compile = build->compile;
      report.timings_ms["compile"] = build->compile.compile_ms;
      return finish(report);
    }
    job.language = build->language;
    job.file_name = build->file_name;
    job.source = build->source;
    job.submission_build = build->submission;
    job.counted_build = build->counted;
    job.second_submission_build = build->second;
    if (build->language == Language::kCuda)
      job.arch = build->compile.arch;  // a cubin runs on its own arch only
  }
  const bool keep_alive = request.workers.keep_alive;
  job.keep_alive = keep_alive;
  job.gpu_turns = request.lease != nullptr;
  Job tool_job = job;
  tool_job.mode = WorkerMode::kSanitize;
  SanitizerPass* sanitizers = prepared->sanitizers();

  SessionHooks hooks;
  hooks.on_progress = request.on_progress;
  bool tools_found_a_fault = false;
  std::optional<SanitizerOutcome> sanitized;
  // With other jobs on the GPU (a lease), the tools get their job once the check worker's tests
  // are done. Each worker holds the GPU only while its own work is there (gpu/gpu_turns.h), but a
  // tool's load of the kernel is one long CUDA call (the sanitizer instruments the code inside it),
  // and each planting in the tests would wait for it; and a kernel that hangs in the tests ends at
  // its phase deadline without ever holding the GPU under a tool. Alone on the GPU (`cudojo
  // check`), they start at the compile.
  std::optional<std::set<std::string>> tools_waiting;  // the job is ready for them; skipped tools
  auto start_sanitizers = [&] {
    if (!sanitizers || !tools_waiting) return;
    sanitizers->start(tool_job, request.lease, *tools_waiting);
    tools_waiting.reset();
  };
  auto finish_sanitizers = [&] {
    if (!sanitizers || sanitized) return;
    if (request.on_progress) request.on_progress("sanitizers");
    start_sanitizers();
    sanitized = sanitizers->finish(request.file_name);
    tools_found_a_fault = !sanitized->findings.empty();
  };
  hooks.on_compiled = [&](const nlohmann::json& compiled) {
    const bool ok = compiled.value("compile", nlohmann::json::object()).value("ok", false);
    if (!ok) {
      if (sanitizers) sanitizers->cancel();
      return;
    }
    take_builds(compiled, tool_job);
    // A kernel that uses the device heap leaves it behind: no worker that ran it is kept.
    if (compiled.value("uses_device_heap", false)) tool_job.keep_alive = false;
    if (!sanitizers) return;
    tools_waiting.emplace();
    if (!compiled.value("may_use_shared_memory", true)) tools_waiting->insert("racecheck");
    if (!compiled.value("may_synchronize", true)) tools_waiting->insert("synccheck");
    if (!request.lease) start_sanitizers();
  };
  hooks.on_await_gpu = [&] {
    finish_sanitizers();
    return !tools_found_a_fault;
  };
  // With the GPU's profiling process (a server's), no check worker enables a profiler: the check
  // worker times its kernel, then that process profiles it in the same turn alone.
  job.profile_elsewhere = job.profile && request.gpu_profiler != nullptr;
  std::optional<GpuProfileOutcome> profiled;
  hooks.on_await_profile = [&](double reference_ms, const nlohmann::json& message) {
    if (!request.gpu_profiler) return;
    // SM throughput takes most of the passes: measured only where the gate will read it, now
    // that the kernel's time ratio is known (or everywhere, when asked).
    Job profile_job = tool_job;
    const auto& ratio = message.value("time_ratio", nlohmann::json());
    profile_job.profile_sm_throughput =
        request.all_metrics ||
        gate_reads_sm_throughput(stage.gate,
                                 ratio.is_number() ? std::optional(ratio.get<double>()) : std::nullopt);
    profiled = request.gpu_profiler->profile(profile_job, reference_ms);
  };
  // Nsight Compute cannot count while that process keeps the profiler enabled: it is let go first,
  // with the GPU alone (the next profile starts another).
  const std::function<void()> free_counters = [&] {
    if (request.gpu_profiler) request.gpu_profiler->let_go();
  };
  hooks.lease = request.lease;
  hooks.keep_alive = keep_alive;
  SessionResult session = run_worker_session(prepared->check_worker(), json_text(nlohmann::json(job)),
                                             request.workers.limits, hooks);
  if (profiled && session.result) merge_profile(*profiled, *session.result);

  DecisionInput input;
  input.stage = &stage;
  input.file_name = request.file_name;
  input.seed = seed;
  input.session = &session;
  input.calibration_dir = request.calibration_dir;
  if (completed(session)) {
    finish_sanitizers();
    input.sanitizers = sanitized;
    if (job.profile && !tools_found_a_fault) {
      if (auto why = cupti_failure(session)) {
        if (request.on_progress) request.on_progress("profiler (ncu)");
        Job launch_job = tool_job;
        launch_job.mode = WorkerMode::kLaunchForNcu;
        input.ncu =
            measure_with_ncu(tool_settings(request.workers), launch_job, *why, request.lease, free_counters);
      }
    }
  } else if (faulted(session)) {
    // A fault's memcheck report often names the faulting line; a fault ends quickly under the tools.
    // Racecheck and synccheck are not given a kernel that faulted: the fault is what to fix first,
    // and a worker that ran it is let go, so each would only be started again, holding the GPU
    // from every other job's timing while it starts.
    const bool held_back = tools_waiting.has_value();
    if (held_back) {
      tools_waiting->insert("racecheck");
      tools_waiting->insert("synccheck");
    }
    finish_sanitizers();
    if (held_back && sanitized)
      sanitized->summary.note +=
          std::string(sanitized->summary.note.empty() ? "" : "; ") +
          "racecheck and synccheck were not run: the kernel faulted, which is the first thing to fix";
    input.sanitizers = sanitized;
  } else if (sanitizers) {
    sanitizers->cancel();
  }
  Report report = decide(input);
  report.timings_ms["start_workers"] = start_ms;
  for (const auto& [step, ms] : session.timings_ms) {
    if (step == "waited_for_gpu") report.timings_ms[step] = ms;
  }
  if (keep_alive) {
    // What stays for the next job: nothing after a job that may have written where it should not
    // (or that ran into a deadline); otherwise each worker that settled clean.
    // And none for ever: a set that has judged max_jobs_per_worker_set jobs is started afresh, so
    // whatever a clean-looking job could still have left behind does not accumulate.
    if (++prepared->jobs_judged_ >= request.workers.limits.max_jobs_per_worker_set) {
      prepared->discard();
      prepared->jobs_judged_ = 0;
    } else if (leaves_doubt_about_memory(report)) {
      prepared->discard_those_that_ran_the_job();
      if (profiled) free_counters();  // the profiling process ran the kernel too
    } else if (!session.reusable) {
      prepared->check_.reset();
    }
  }
  report.language = std::string(to_string(job.language));
  if (build) {
    // The worker only loaded what was compiled here: the compile's own record is this one.
    // A build the GPU's driver could not load keeps the worker's words about that.
    if (report.compile.ok || report.compile.diagnostics.empty()) {
      const std::string arch = report.compile.arch;
      report.compile = build->compile;
      if (!arch.empty()) report.compile.arch = arch;
    }
    report.timings_ms["frontend_compile"] = build->compile.compile_ms;
  }
  if (request.hot_spots) add_hot_spots(request, tool_job, report, free_counters);
  return finish(report);
}

std::string self_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("cudojo") : path.string();
}

}  // namespace cudojo

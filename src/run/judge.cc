#include "run/judge.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "check/findings.h"
#include "check/sanitizer.h"
#include "stage/contract_info.h"
#include "measure/profiler.h"
#include "run/process.h"
#include "run/protocol.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after_ms(double ms) {
  return Clock::now() + std::chrono::microseconds(static_cast<long long>(ms * 1000));
}

std::uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

std::string tail(const std::string& text, std::size_t bytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

// Calibrated figures for this GPU, the previous stage's beside this one; a broken file is named,
// not trusted.
std::optional<Calibration> apply_calibration(const CheckRequest& request, Report& report) {
  if (request.calibration_dir.empty() || !report.gpu) return std::nullopt;
  std::optional<Calibration> calibration;
  try {
    calibration = load_calibration(request.calibration_dir, report.gpu->name);
  } catch (const CalibrationError& error) {
    report.calibration.note = fmt::format("calibration ignored: {}", error.what());
    return std::nullopt;
  }
  if (!calibration) return std::nullopt;
  const std::string& id = request.stage->id;
  const auto slash = id.rfind('/');
  if (slash != std::string::npos) {
    try {
      const int number = std::stoi(id.substr(slash + 1));
      const std::string previous = id.substr(0, slash + 1) + std::to_string(number - 1);
      if (auto found = calibration->stages.find(previous); found != calibration->stages.end()) {
        report.calibration.previous_stage = previous;
        report.calibration.previous_reference_time_ms = found->second.reference_time_ms;
        report.calibration.previous_bandwidth_gbps = found->second.bandwidth_gbps;
        if (found->second.reference_metrics &&
            !std::isnan(found->second.reference_metrics->sm_throughput_pct)) {
          report.calibration.previous_sm_throughput_pct = found->second.reference_metrics->sm_throughput_pct;
        }
      }
    } catch (...) {
      // Stage ids that do not end in a number have no "previous stage".
    }
  }
  if (calibration->stages.count(id)) {
    report.calibration.file =
        (std::filesystem::path(request.calibration_dir) / (gpu_slug(report.gpu->name) + ".json")).string();
    report.calibration.measured_at = calibration->measured_at;
  }
  return calibration;
}

// The verdict and its sentence for a worker that ran to the end and sent a result.
void decide_completed(const Stage& stage, Report& report, const std::optional<Calibration>& calibration) {
  const bool all_passed = !report.tests.empty() && std::all_of(report.tests.begin(), report.tests.end(),
                                                               [](const TestResult& t) { return t.ok; });
  JudgeFacts facts;
  facts.compiled = true;
  facts.all_tests_passed = all_passed;
  if (report.metrics.time_ms && report.metrics.bandwidth_gbps && report.gpu) {
    const double bytes = *report.metrics.bandwidth_gbps * 1e9 * report.metrics.time_ms->median_ms * 1e-3;
    if (auto finding =
            speed_of_light_finding(bytes, report.metrics.time_ms->median_ms, report.gpu->peak_read_gbps)) {
      report.findings.push_back(*finding);
    }
  }
  facts.has_findings = !report.findings.empty();
  if (all_passed && !facts.has_findings) {
    const GateReference reference = choose_gate_reference(report, calibration);
    std::optional<std::pair<double, double>> sm;
    if (report.metrics.kernel && reference.sm_throughput_pct &&
        !std::isnan(report.metrics.kernel->sm_throughput_pct)) {
      sm = std::make_pair(report.metrics.kernel->sm_throughput_pct, *reference.sm_throughput_pct);
    }
    report.gate = apply_gate(stage.gate, report.metrics.time_ms, reference.time_ms, sm);
    if (reference.calibrated) report.gate->rule += " (reference figures calibrated on this GPU model)";
    facts.gate_passed = report.gate->passed;
  }
  report.verdict = decide_verdict(facts);
  switch (report.verdict) {
    case Verdict::kAccepted:
      report.message = "every test passed and the gate was met";
      break;
    case Verdict::kTooSlow:
      report.message = report.metrics.time_ratio
                           ? fmt::format("correct, but {:.2f}x the reference's time; the gate allows {:g}x",
                                         *report.metrics.time_ratio, stage.gate.max_time_ratio)
                           : "correct, but no time could be measured for the gate";
      break;
    default: {
      int failed = 0;
      for (const auto& t : report.tests) failed += t.ok ? 0 : 1;
      report.message = fmt::format("{} of {} tests failed{}", failed, report.tests.size(),
                                   report.findings.empty() ? "" : "; see the findings");
    }
  }
}

// The size a sanitizer watches: a partial last block, few blocks (the tools slow kernels 10-100x).
constexpr std::int64_t kSanitizeSize = 1000;
constexpr double kSanitizerBudgetMs = 60'000;

// Runs one compute-sanitizer tool over a worker in "sanitize" mode; returns its log.
// A file a tool writes its log into, removed when it goes out of scope.
class ToolLog {
 public:
  explicit ToolLog(const char* prefix) : path_(std::string("/tmp/") + prefix + "-XXXXXX") {
    const int fd = mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file for a tool's log");
    close(fd);
  }
  ~ToolLog() { std::remove(path_.c_str()); }
  ToolLog(const ToolLog&) = delete;
  ToolLog& operator=(const ToolLog&) = delete;
  const std::string& path() const { return path_; }
  std::string read() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
};

// Runs a worker on `job`, behind `prefix` (a tool and its options, or nothing), within the tool
// budget; returns its result message, or nullopt when it sent none (a tool may not pass fd 3 on).
std::optional<nlohmann::json> run_tool_worker(const CheckRequest& request, const Job& job,
                                              std::vector<std::string> argv) {
  argv.push_back(request.worker_executable);
  argv.push_back("worker");
  WorkerProcess worker(argv, request.limits.max_output_bytes, request.worker_environment);
  worker.send_job(nlohmann::json(job).dump());
  const auto deadline = after_ms(kSanitizerBudgetMs);
  std::optional<nlohmann::json> result;
  std::string line;
  for (;;) {
    const auto wait = worker.next_message(deadline, line);
    if (wait == WorkerProcess::Wait::kMessage) {
      auto message = nlohmann::json::parse(line, nullptr, false);
      if (!message.is_discarded() && message.value("event", "") == "result") result = message;
      continue;
    }
    if (wait == WorkerProcess::Wait::kDeadline) worker.kill();
    break;
  }
  worker.wait();
  return result;
}

// Runs one compute-sanitizer tool over a worker in "sanitize" mode; returns its log.
std::string run_sanitizer_tool(const CheckRequest& request, const std::string& sanitizer,
                               const std::string& tool, const Job& base_job, double& seconds) {
  const auto started = Clock::now();
  ToolLog log("cudojo-sanitizer");
  Job job = base_job;
  job.mode = "sanitize";
  job.tool_size = kSanitizeSize;
  run_tool_worker(request, job, {sanitizer, "--tool", tool, "--log-file", log.path(), "--print-limit", "20"});
  const std::string text = log.read();
  // CUDOJO_KEEP_SANITIZER_LOGS=DIR keeps each raw log (how tests/fixtures/sanitizer/ was captured).
  if (const char* keep = std::getenv("CUDOJO_KEEP_SANITIZER_LOGS"); keep && *keep) {
    std::ofstream(std::string(keep) + "/" + tool + "-" + request.file_name + ".txt") << text;
  }
  seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return text;
}

// A sanitizer finding whose code the tests already reported gives that finding its line rather
// than repeating it; a second line, or a new code, is a finding of its own.
void add_or_locate(std::vector<Finding>& findings, const Finding& found) {
  for (auto& existing : findings) {
    if (existing.code != found.code) continue;
    if (existing.line == found.line) return;
    if (!existing.line) {
      existing.line = found.line;
      return;
    }
    if (!found.line) return;
  }
  findings.push_back(found);
}

void run_sanitizers(const CheckRequest& request, const Job& job, Report& report) {
  report.sanitizer.requested = true;
  const std::string sanitizer = request.sanitizer_executable.empty()
                                    ? find_cuda_tool("compute-sanitizer", "CUDOJO_COMPUTE_SANITIZER")
                                    : request.sanitizer_executable;
  if (sanitizer.empty()) {
    report.sanitizer.note =
        "compute-sanitizer was not found (set CUDOJO_COMPUTE_SANITIZER or put it on PATH); "
        "races and divergent barriers were not looked for";
    return;
  }
  for (const char* tool : kSanitizerTools) {
    if (request.on_progress) request.on_progress(std::string("sanitizer: ") + tool);
    double seconds = 0;
    const std::string log = run_sanitizer_tool(request, sanitizer, tool, job, seconds);
    if (log.find("COMPUTE-SANITIZER") == std::string::npos && log.find("=========") == std::string::npos) {
      report.sanitizer.note = fmt::format("{} produced no report: {}", tool, tail(log, 300));
      report.sanitizer.tools.push_back({tool, 0, seconds});
      continue;
    }
    const SanitizerErrors errors = parse_sanitizer_log(tool, log, request.file_name);
    report.sanitizer.tools.push_back({tool, errors.errors, seconds});
    for (const auto& finding : errors.findings) add_or_locate(report.findings, finding);
  }
  report.sanitizer.ran = true;
}

// A worker in profile mode, measuring with CUPTI itself or, under ncu, only launching.
std::optional<nlohmann::json> run_profile_worker(const CheckRequest& request, const Job& base_job,
                                                 const std::vector<std::string>& prefix, bool use_cupti) {
  Job job = base_job;
  job.mode = "profile";
  job.use_cupti = use_cupti;
  return run_tool_worker(request, job, prefix);
}

// Metrics for the reference and the submission, one launch each at the performance size: the
// CUPTI range profiler in a worker first, ncu around a worker when that fails.
void run_profiler(const CheckRequest& request, const Job& job, Report& report) {
  if (request.on_progress) request.on_progress("profiler");
  std::string cupti_error = "the profiling worker sent no result";
  // CUDOJO_PROFILER=ncu skips CUPTI: how the two collectors are compared (scripts/metrics-check.sh).
  const char* forced = std::getenv("CUDOJO_PROFILER");
  if (forced && std::string(forced) == "ncu") {
    cupti_error = "skipped (CUDOJO_PROFILER=ncu)";
  } else if (auto result = run_profile_worker(request, job, {}, true)) {
    const auto profile = result->value("profile", nlohmann::json::object());
    if (profile.value("ok", false) && profile.value("kernels", nlohmann::json::array()).size() >= 2) {
      report.metrics.reference_kernel = profile["kernels"][0].get<KernelMetrics>();
      report.metrics.kernel = profile["kernels"][1].get<KernelMetrics>();
      report.metrics.metrics_source = "cupti";
      report.metrics.metrics_note = profile.value("error", "");
      report.metrics.metrics_passes = profile.value("passes", 0);
      return;
    }
    cupti_error = profile.value(
        "error", result->value("report", nlohmann::json::object()).value("message", cupti_error));
  }
  const std::string ncu = find_cuda_tool("ncu", "CUDOJO_NCU");
  if (ncu.empty()) {
    report.metrics.metrics_note =
        fmt::format("metrics unavailable: CUPTI: {}; ncu was not found", cupti_error);
    return;
  }
  ToolLog csv("cudojo-ncu");
  std::string names;
  for (const auto& name : profiler_metric_names()) names += (names.empty() ? "" : ",") + name;
  run_profile_worker(request, job,
                     {ncu, "--clock-control", "none", "--metrics", names, "--csv", "--log-file", csv.path()},
                     false);
  const ProfileResult parsed = parse_ncu_csv(csv.read());
  if (parsed.ok && parsed.kernels.size() >= 2) {
    report.metrics.reference_kernel = parsed.kernels[0];
    report.metrics.kernel = parsed.kernels[1];
    report.metrics.metrics_source = "ncu";
    report.metrics.metrics_note = fmt::format("CUPTI failed ({}); measured with ncu", cupti_error);
    return;
  }
  report.metrics.metrics_note = fmt::format("metrics unavailable: CUPTI: {}; ncu: {}", cupti_error,
                                            parsed.ok ? "fewer than two kernels profiled" : parsed.error);
}

}  // namespace

GateReference choose_gate_reference(const Report& report, const std::optional<Calibration>& calibration) {
  GateReference reference;
  if (calibration) {
    if (auto found = calibration->stages.find(report.stage); found != calibration->stages.end()) {
      reference.time_ms = found->second.reference_time_ms;
      if (found->second.reference_metrics &&
          !std::isnan(found->second.reference_metrics->sm_throughput_pct)) {
        reference.sm_throughput_pct = found->second.reference_metrics->sm_throughput_pct;
      }
      reference.calibrated = true;
      return reference;
    }
  }
  reference.time_ms = report.metrics.reference_time_ms;
  if (report.metrics.reference_kernel && !std::isnan(report.metrics.reference_kernel->sm_throughput_pct)) {
    reference.sm_throughput_pct = report.metrics.reference_kernel->sm_throughput_pct;
  }
  return reference;
}

std::string find_cuda_tool(const std::string& name, const char* env_variable) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(env_variable); env && *env) candidates.push_back(env);
  if (const char* path = std::getenv("PATH")) {
    std::stringstream folders(path);
    std::string folder;
    while (std::getline(folders, folder, ':')) {
      if (!folder.empty()) candidates.push_back(folder + "/" + name);
    }
  }
  candidates.push_back("/usr/local/cuda/bin/" + name);
  for (const auto& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
  }
  return {};
}

double phase_budget_ms(const JudgeLimits& limits, int launches, double reference_ms) {
  const double per_launch = std::max(reference_ms, 0.001);
  return std::min(limits.phase_cap_ms,
                  limits.phase_floor_ms + launches * per_launch * limits.phase_launch_factor);
}

std::string self_executable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("cudojo") : path.string();
}

Report run_check(const CheckRequest& request) {
  const auto started = Clock::now();
  const Stage& stage = *request.stage;
  Report report;
  report.stage = stage.id;
  report.file = request.file_name;
  report.seed = request.seed.value_or(fresh_seed());
  report.compile.arch = request.arch.value_or("");

  auto finish = [&](Report& r) -> Report {
    r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    return r;
  };

  // Refuse an oversize source here, before it is piped anywhere.
  if (request.source.size() > request.limits.max_source_bytes) {
    report.verdict = Verdict::kCompileError;
    report.compile.log = fmt::format("{}: the source is {} bytes; the limit is {} bytes", request.file_name,
                                     request.source.size(), request.limits.max_source_bytes);
    report.compile.diagnostics.push_back({request.file_name, 0, "error", report.compile.log});
    report.message = "the submission is too large";
    return finish(report);
  }

  Job job;
  job.stage = stage;
  job.source = request.source;
  job.file_name = request.file_name;
  job.reference_source = stage.reference_source;
  job.arch = request.arch;
  job.cuda_include_dir = request.cuda_include_dir;
  job.seed = report.seed;
  job.max_source_bytes = request.limits.max_source_bytes;
  job.max_log_bytes = request.limits.max_compile_log_bytes;

  WorkerProcess worker({request.worker_executable, "worker"}, request.limits.max_output_bytes,
                       request.worker_environment);
  auto progress = [&](std::string_view phase) {
    if (request.on_progress) request.on_progress(phase);
  };
  worker.send_job(nlohmann::json(job).dump());

  auto deadline = after_ms(request.limits.startup_budget_ms);
  double budget_ms = request.limits.startup_budget_ms;
  double reference_ms = -1;
  bool compiled = false;
  bool timed_out = false;
  std::string phase = "start-up and compile";
  std::optional<nlohmann::json> result;
  std::string protocol_error;

  for (bool reading = true; reading;) {
    std::string line;
    switch (worker.next_message(deadline, line)) {
      case WorkerProcess::Wait::kDeadline:
        worker.kill();
        timed_out = true;
        reading = false;
        break;
      case WorkerProcess::Wait::kClosed:
        reading = false;
        break;
      case WorkerProcess::Wait::kMessage: {
        nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
        if (message.is_discarded() || !message.contains("event")) {
          protocol_error = "the worker sent a malformed message";
          worker.kill();
          reading = false;
          break;
        }
        const std::string event = message.value("event", "");
        if (event == "compiled") {
          compiled = true;
          progress("compiled");
          const auto& compile = message.value("compile", nlohmann::json::object());
          report.compile.ok = compile.value("ok", false);
          report.compile.arch = compile.value("arch", "");
          report.compile.nvrtc = compile.value("nvrtc", "");
          report.compile.compile_ms = compile.value("compile_ms", 0.0);
          // The sanitizer and profiler workers load these instead of compiling again; a build
          // that does not decode is simply compiled again there.
          const auto& builds = message.value("builds", nlohmann::json::object());
          try {
            if (builds.contains("submission")) job.submission_build = builds.at("submission").get<BuiltKernel>();
            if (builds.contains("reference")) job.reference_build = builds.at("reference").get<BuiltKernel>();
          } catch (const std::exception&) {
            job.submission_build.reset();
            job.reference_build.reset();
          }
        } else if (event == "reference_time") {
          reference_ms = message.value("ms", -1.0);
        } else if (event == "phase") {
          phase = message.value("name", "?");
          progress(phase);
          budget_ms = phase_budget_ms(request.limits, message.value("launches", 1), reference_ms);
          deadline = after_ms(budget_ms);
        } else if (event == "result") {
          result = message;
          reading = false;
        }
      }
    }
  }
  const auto exit = worker.wait();
  report.output.text = worker.output();
  report.output.truncated = worker.output_truncated();
  report.output.bytes = worker.output_bytes();

  if (timed_out) {
    report.verdict = compiled ? Verdict::kTimeLimitExceeded : Verdict::kCompileError;
    report.message = compiled
                         ? fmt::format(
                               "the {} phase ran past its limit of {:.0f} ms (derived from the reference's "
                               "{:.4f} ms per launch); the worker was stopped",
                               phase, budget_ms, reference_ms)
                         : fmt::format("compiling did not finish within {:.0f} ms", budget_ms);
    if (!compiled) report.compile.log = report.message;
    return finish(report);
  }
  if (!result) {
    report.verdict = Verdict::kInternalError;
    report.message = protocol_error.empty() ? fmt::format("the worker {} without sending a result: {}",
                                                          exit.describe(), tail(worker.output(), 600))
                                            : protocol_error;
    return finish(report);
  }

  try {
    const std::string outcome = result->at("outcome").get<std::string>();
    Report worker_report = result->at("report").get<Report>();
    worker_report.output = report.output;
    worker_report.seed = report.seed;
    worker_report.file = request.file_name;
    if (outcome == outcome::kCompileError) {
      worker_report.verdict = Verdict::kCompileError;
    } else if (outcome == outcome::kNoDevice) {
      worker_report.verdict = Verdict::kNoDevice;
    } else if (outcome == outcome::kRuntimeError) {
      worker_report.verdict = Verdict::kRuntimeError;
    } else if (outcome == outcome::kCompleted) {
      if (request.sanitize) run_sanitizers(request, job, worker_report);
      const bool correct = !worker_report.tests.empty() && worker_report.findings.empty() &&
                           std::all_of(worker_report.tests.begin(), worker_report.tests.end(),
                                       [](const TestResult& t) { return t.ok; });
      if (request.profile && correct) run_profiler(request, job, worker_report);
      const auto calibration = apply_calibration(request, worker_report);
      decide_completed(stage, worker_report, calibration);
    } else {
      worker_report.verdict = Verdict::kInternalError;
    }
    return finish(worker_report);
  } catch (const std::exception& error) {
    report.verdict = Verdict::kInternalError;
    report.message = fmt::format("the worker's result could not be read: {}", error.what());
    return finish(report);
  }
}

}  // namespace cudojo

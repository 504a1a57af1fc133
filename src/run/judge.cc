#include "run/judge.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>

#include "contract/contract_info.h"
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

// The verdict and its sentence for a worker that ran to the end and sent a result.
void decide_completed(const Stage& stage, Report& report) {
  const bool all_passed = !report.tests.empty() &&
                          std::all_of(report.tests.begin(), report.tests.end(), [](const TestResult& t) { return t.ok; });
  JudgeFacts facts;
  facts.compiled = true;
  facts.all_tests_passed = all_passed;
  facts.has_findings = !report.findings.empty();
  if (all_passed && !facts.has_findings) {
    report.gate = apply_gate(stage.gate, report.metrics.time_ms, report.metrics.reference_time_ms);
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

}  // namespace

double phase_budget_ms(const JudgeLimits& limits, int launches, double reference_ms) {
  const double per_launch = std::max(reference_ms, 0.001);
  return std::min(limits.phase_cap_ms, limits.phase_floor_ms + launches * per_launch * limits.phase_launch_factor);
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
    report.message =
        compiled ? fmt::format("the {} phase ran past its limit of {:.0f} ms (derived from the reference's "
                               "{:.4f} ms per launch); the worker was stopped",
                               phase, budget_ms, reference_ms)
                 : fmt::format("compiling did not finish within {:.0f} ms", budget_ms);
    if (!compiled) report.compile.log = report.message;
    return finish(report);
  }
  if (!result) {
    report.verdict = Verdict::kInternalError;
    report.message = protocol_error.empty()
                         ? fmt::format("the worker {} without sending a result: {}", exit.describe(),
                                       tail(worker.output(), 600))
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
      decide_completed(stage, worker_report);
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

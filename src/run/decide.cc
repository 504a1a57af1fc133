#include "run/decide.h"

#include <fmt/format.h>

#include <cmath>

#include "check/findings.h"
#include "gate/calibration.h"
#include "gate/gate.h"
#include "run/protocol.h"

namespace cudojo {

namespace {

// The judge could not judge: whatever the worker managed to say is kept beside the reason.
Report judge_failure(Report report, std::string message) {
  JudgeFacts facts;
  facts.internal_error = true;
  report.verdict = decide_verdict(facts);
  report.message = std::move(message);
  return report;
}

// The gate for a correct submission: calibrated reference figures when this GPU has them, else the
// reference measured in the same run; SM throughput joins when both were profiled.
GateResult gate(const Stage& stage, const Report& report, const CalibrationLookup& calibration) {
  if (stage.gate.rule == GateRule::kBaselineRatio) {
    // A library timed in the same rotation: no calibrated figure stands in for it.
    GateResult result = apply_gate(stage.gate, report.metrics.time_ms, report.metrics.baseline_time_ms);
    result.rule =
        fmt::format("time_ms.median <= {:g} x {} (timed in the same run)", stage.gate.max_time_ratio,
                    report.metrics.baseline_name.empty() ? "the baseline" : report.metrics.baseline_name);
    return result;
  }
  const GateReference reference = choose_gate_reference(
      stage.id, calibration.calibration, report.metrics.reference_time_ms, report.metrics.reference_kernel);
  std::optional<std::pair<double, double>> sm;
  if (report.metrics.kernel && reference.sm_throughput_pct &&
      !std::isnan(report.metrics.kernel->sm_throughput_pct)) {
    sm = std::make_pair(report.metrics.kernel->sm_throughput_pct, *reference.sm_throughput_pct);
  }
  GateResult result = apply_gate(stage.gate, report.metrics.time_ms, reference.time_ms, sm);
  if (reference.calibrated) result.rule += " (reference figures calibrated on this GPU model)";
  return result;
}

void decide_completed(const DecisionInput& input, Report& report) {
  const Stage& stage = *input.stage;
  if (input.sanitizers) {
    report.sanitizer = input.sanitizers->summary;
    for (const auto& finding : input.sanitizers->findings) add_or_locate(report.findings, finding);
  }
  if (input.ncu) {
    report.metrics.reference_kernel = input.ncu->reference_kernel;
    report.metrics.kernel = input.ncu->kernel;
    report.metrics.metrics_source = input.ncu->kernel ? "ncu" : "";
    report.metrics.metrics_note = input.ncu->note;
  }
  const CalibrationLookup calibration =
      report.gpu ? look_up_calibration(input.calibration_dir, report.gpu->name, stage.id)
                 : CalibrationLookup{};
  report.calibration = calibration.use;
  if (report.metrics.time_ms && report.metrics.bandwidth_gbps && report.gpu) {
    const double bytes = *report.metrics.bandwidth_gbps * 1e9 * report.metrics.time_ms->median_ms * 1e-3;
    if (auto finding =
            speed_of_light_finding(bytes, report.metrics.time_ms->median_ms, report.gpu->peak_read_gbps)) {
      report.findings.push_back(*finding);
    }
  }

  JudgeFacts facts;
  facts.compiled = true;
  facts.all_tests_passed = all_tests_passed(report.tests);
  facts.has_findings = !report.findings.empty();
  if (is_correct(report.tests, report.findings)) {
    report.gate = gate(stage, report, calibration);
    facts.gate_passed = report.gate->passed;
  } else if (report.metrics.time_ms || report.metrics.kernel) {
    // Found wrong after it was measured (an implausible time): its figures mean nothing.
    const std::int64_t n = report.metrics.n;
    report.metrics = Metrics{};
    report.metrics.n = n;
    report.metrics.note = "not timed: the submission is not correct yet";
  }
  report.verdict = decide_verdict(facts);
  switch (report.verdict) {
    case Verdict::kAccepted:
      report.message = "every test passed and the gate was met";
      break;
    case Verdict::kTooSlow:
      if (stage.gate.rule == GateRule::kBaselineRatio && report.metrics.baseline_ratio) {
        report.message = fmt::format("correct, but {:.2f}x {}'s time; the gate allows {:g}x",
                                     *report.metrics.baseline_ratio, report.metrics.baseline_name,
                                     stage.gate.max_time_ratio);
      } else {
        report.message = report.metrics.time_ratio
                             ? fmt::format("correct, but {:.2f}x the reference's time; the gate allows {:g}x",
                                           *report.metrics.time_ratio, stage.gate.max_time_ratio)
                             : "correct, but no time could be measured for the gate";
      }
      break;
    default: {
      int failed = 0;
      for (const auto& t : report.tests) failed += t.ok ? 0 : 1;
      report.message = fmt::format("{} of {} tests failed{}", failed, report.tests.size(),
                                   report.findings.empty() ? "" : "; see the findings");
    }
  }
}

Report decide_session(const DecisionInput& input) {
  const SessionResult& session = *input.session;
  Report report;
  report.stage = input.stage->id;
  JudgeFacts facts;
  switch (session.ending) {
    case SessionResult::Ending::kDeadline:
      facts.compiled = session.compiled;
      facts.timed_out = true;
      report.verdict = decide_verdict(facts);
      if (session.compiled) {
        report.compile.ok = true;
        report.message = fmt::format(
            "the {} phase ran past its limit of {:.0f} ms (derived from the reference's {:.4f} ms per "
            "launch); the "
            "worker was stopped",
            session.phase, session.budget_ms, session.reference_ms);
      } else {
        report.message = fmt::format("compiling did not finish within {:.0f} ms", session.budget_ms);
        report.compile.log = report.message;
      }
      return report;
    case SessionResult::Ending::kMalformed:
      return judge_failure(report, "the worker sent a malformed message");
    case SessionResult::Ending::kClosed:
      return judge_failure(report, fmt::format("the worker {} without sending a result: {}",
                                               session.exit.describe(), last_part(session.output.text, 600)));
    case SessionResult::Ending::kResult:
      break;
  }

  std::string outcome;
  try {
    outcome = session.result->at("outcome").get<std::string>();
    report = session.result->at("report").get<Report>();
  } catch (const std::exception& error) {
    return judge_failure(report, fmt::format("the worker's result could not be read: {}", error.what()));
  }
  report.stage = input.stage->id;
  if (outcome == outcome::kCompleted) {
    decide_completed(input, report);
    return report;
  }
  if (outcome == outcome::kCompileError) {
    facts.compiled = false;
  } else if (outcome == outcome::kNoDevice) {
    facts.compiled = true;
    facts.device_present = false;
  } else if (outcome == outcome::kRuntimeError) {
    facts.compiled = true;
    facts.runtime_fault = true;
    if (input.sanitizers) {
      report.sanitizer = input.sanitizers->summary;
      for (const auto& finding : input.sanitizers->findings) add_or_locate(report.findings, finding);
    }
  } else {
    if (outcome != outcome::kInternalError)
      report.message = fmt::format("the worker ended with '{}'", outcome);
    facts.internal_error = true;
  }
  report.verdict = decide_verdict(facts);
  return report;
}

}  // namespace

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

Report decide(const DecisionInput& input) {
  Report report = decide_session(input);
  const SessionResult& session = *input.session;
  report.file = input.file_name;
  report.seed = input.seed;
  const std::string note = report.output.note;  // the worker's word on how printing was bounded
  report.output = session.output;
  report.output.note = note;
  for (const auto& [step, ms] : session.timings_ms) report.timings_ms[step] = ms;
  if (input.sanitizers) {
    for (const auto& [step, ms] : input.sanitizers->timings_ms) report.timings_ms[step] = ms;
  }
  if (input.ncu) report.timings_ms["ncu"] = input.ncu->ms;
  return report;
}

}  // namespace cudojo

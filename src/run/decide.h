// The one place a verdict is decided. Every way a check can end (compile error, no device, a
// fault, a deadline, a worker that died or spoke nonsense, a completed run with the tools'
// findings and metrics) arrives here as data, and decide() turns it into the Report: verdict,
// message, findings, gate. Nothing else in cudojo sets a verdict on a judged submission.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "report/report.h"
#include "run/session.h"
#include "run/tools.h"
#include "stage/stage.h"

namespace cudojo {

struct DecisionInput {
  const Stage* stage = nullptr;
  std::string file_name;
  std::uint64_t seed = 0;
  const SessionResult* session = nullptr;
  // The sanitizer pass, when it was requested and the run completed.
  std::optional<SanitizerOutcome> sanitizers;
  // ncu's metrics, when CUPTI failed in the check worker and ncu was tried.
  std::optional<NcuMetrics> ncu;
  // Where `cudojo calibrate` keeps per-GPU figures; empty: none.
  std::string calibration_dir;
};

Report decide(const DecisionInput& input);

// A tool's finding whose code the tests already reported gives that finding its line rather than
// repeating it; a second line, or a new code, is a finding of its own.
void add_or_locate(std::vector<Finding>& findings, const Finding& found);

}  // namespace cudojo

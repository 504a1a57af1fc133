// The fixed verdict vocabulary and its priority. A learner's failure (compile_error ... too_slow) is
// kept apart from the judge's (no_device, internal_error): the judge never blames the learner for
// its own trouble. docs/verdicts.md documents these names; they are stable.
#pragma once

#include <optional>
#include <string_view>

namespace cudojo {

// Declared in priority order, highest first: combining two outcomes keeps the earlier one.
enum class Verdict {
  kInternalError,
  kCompileError,
  kNoDevice,
  kRuntimeError,
  kTimeLimitExceeded,
  kWrongAnswer,
  kTooSlow,
  kAccepted,
};

std::string_view to_string(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view name);

// The higher-priority of two verdicts.
Verdict combine(Verdict a, Verdict b);

// 0 accepted; 1 any other learner verdict; 2 no_device or internal_error (the judge could not judge).
int exit_code(Verdict verdict);

bool is_learner_verdict(Verdict verdict);

// What the judge observed, reduced to the facts the verdict depends on.
struct JudgeFacts {
  bool internal_error = false;
  bool compiled = false;
  bool device_present = true;
  bool runtime_fault = false;
  bool timed_out = false;
  bool all_tests_passed = false;
  bool has_findings = false;
  bool gate_passed = false;
};

Verdict decide_verdict(const JudgeFacts& facts);

}  // namespace cudojo

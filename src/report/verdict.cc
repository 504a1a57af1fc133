#include "report/verdict.h"

#include <array>
#include <utility>

namespace cudojo {

namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 8> kNames = {{
    {Verdict::kInternalError, "internal_error"},
    {Verdict::kCompileError, "compile_error"},
    {Verdict::kNoDevice, "no_device"},
    {Verdict::kRuntimeError, "runtime_error"},
    {Verdict::kTimeLimitExceeded, "time_limit_exceeded"},
    {Verdict::kWrongAnswer, "wrong_answer"},
    {Verdict::kTooSlow, "too_slow"},
    {Verdict::kAccepted, "accepted"},
}};

}  // namespace

std::string_view to_string(Verdict verdict) {
  for (const auto& [value, name] : kNames) {
    if (value == verdict) return name;
  }
  return "internal_error";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

Verdict combine(Verdict a, Verdict b) { return static_cast<int>(a) <= static_cast<int>(b) ? a : b; }

int exit_code(Verdict verdict) {
  if (verdict == Verdict::kAccepted) return 0;
  return is_learner_verdict(verdict) ? 1 : 2;
}

bool is_learner_verdict(Verdict verdict) {
  return verdict != Verdict::kNoDevice && verdict != Verdict::kInternalError;
}

Verdict decide_verdict(const JudgeFacts& facts) {
  Verdict verdict = Verdict::kAccepted;
  if (facts.internal_error) verdict = combine(verdict, Verdict::kInternalError);
  if (!facts.compiled) return combine(verdict, Verdict::kCompileError);
  if (!facts.device_present) return combine(verdict, Verdict::kNoDevice);
  if (facts.runtime_fault) verdict = combine(verdict, Verdict::kRuntimeError);
  if (facts.timed_out) verdict = combine(verdict, Verdict::kTimeLimitExceeded);
  if (!facts.all_tests_passed || facts.has_findings) verdict = combine(verdict, Verdict::kWrongAnswer);
  if (!facts.gate_passed) verdict = combine(verdict, Verdict::kTooSlow);
  return verdict;
}

}  // namespace cudojo

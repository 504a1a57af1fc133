#include "contract/float_sum_judge.h"

#include <fmt/format.h>

#include <cmath>

#include "check/exact_checks.h"
#include "check/findings.h"

namespace cudojo::float_sum_internal {

void judge_result(const Stage& stage, DataKind kind, std::span<const float> values,
                  const std::vector<float>& result, bool partial, bool two_kernels,
                  ContractOutcome& outcome) {
  const auto n = static_cast<std::int64_t>(values.size());
  const ReferenceSum total = reference_sum(values);
  if (!partial) {
    outcome.tests.push_back(judge_total(to_string(kind), n, is_exact(kind), result[0], total));
    TestResult& test = outcome.tests.back();
    if (!test.ok && is_exact(kind) && std::isfinite(result[0]) && std::fabs(result[0]) < kLoudThreshold) {
      // Not a planted value (the poisoning runs name those): the kernel's own additions are off.
      outcome.findings.add(
          finding_code::kWrongValue,
          fmt::format("on exact data (every order of additions gives one answer) the sum came out as {:.9g}, "
                      "expected {:.9g}: {}",
                      result[0], total.sum,
                      result[0] < total.sum ? "some elements were never added (a tail, or a grid that does "
                                              "not cover all of N?)"
                                            : "some elements were added more than once"),
          n);
    }
    if (!test.ok && !is_exact(kind) && result[0] != result[0]) {
      outcome.findings.add(finding_code::kWrongValue,
                           two_kernels
                               ? "the sum came out as NaN: *out (or a partial slot) starts as NaN and "
                                 "must be written, not added to"
                               : "the sum came out as NaN",
                           n);
    }
    if (const auto bound = stage.max_relative_error; bound && !is_exact(kind)) {
      const PrecisionCheck precision = check_relative_error(result[0], total.sum, *bound);
      test.detail += fmt::format("; relative error {:.3g} (bound {:.3g})", precision.relative_error, *bound);
      if (!precision.ok) {
        test.ok = false;
        outcome.findings.add(
            finding_code::kImprecise,
            fmt::format("relative error {:.3g} against the double-precision sum, above the "
                        "stage's bound {:.3g}: every float add rounds to the total's precision, "
                        "so many small adds into one large total drift; add fewer, larger "
                        "partial sums (a tree per block) or compensate",
                        precision.relative_error, *bound),
            n);
      }
    }
    return;
  }
  auto per_block = block_reference_sums(values, stage.launch.threads_per_block);
  PartialAnalysis analysis = analyse_partials(result, per_block, is_exact(kind), total);
  outcome.tests.push_back(judge_partials(to_string(kind), n, analysis, total));
  add_partial_findings(n, analysis, outcome.findings);
}

}  // namespace cudojo::float_sum_internal

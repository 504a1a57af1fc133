#include "contract/float_sum_judge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace cudojo::float_sum_internal {
namespace {

std::vector<float> exact_values(int n) {
  std::vector<float> values(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = static_cast<float>(i % 4);
  return values;
}

float sum_of(const std::vector<float>& values) { return std::accumulate(values.begin(), values.end(), 0.0f); }

TEST(FloatSumJudge, AnExactTotalPassesAndAWrongOneSaysWhichWay) {
  Stage stage;
  const auto values = exact_values(1000);
  ContractOutcome right;
  judge_result(stage, DataKind::kExact, values, {sum_of(values)}, false, false, right);
  ASSERT_EQ(right.tests.size(), 1u);
  EXPECT_TRUE(right.tests[0].ok);
  EXPECT_TRUE(right.findings.finish().empty());

  ContractOutcome short_by_one;
  judge_result(stage, DataKind::kExact, values, {sum_of(values) - 1}, false, false, short_by_one);
  EXPECT_FALSE(short_by_one.tests[0].ok);
  const auto findings = short_by_one.findings.finish();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, finding_code::kWrongValue);
  EXPECT_NE(findings[0].message.find("never added"), std::string::npos);
}

TEST(FloatSumJudge, ANanTotalOfATwoKernelSumNamesTheUnwrittenOutput) {
  Stage stage;
  std::vector<float> values(100, 0.5f);
  ContractOutcome outcome;
  judge_result(stage, DataKind::kRandomSigned, values, {std::nanf("")}, false, true, outcome);
  EXPECT_FALSE(outcome.tests[0].ok);
  const auto findings = outcome.findings.finish();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("must be written, not added to"), std::string::npos);
}

TEST(FloatSumJudge, AStagesPrecisionBoundHoldsInexactTotals) {
  Stage stage;
  stage.max_relative_error = 1e-6;
  std::vector<float> values(1000, 0.1f);
  ContractOutcome outcome;
  judge_result(stage, DataKind::kTenths, values, {100.1f}, false, false, outcome);
  EXPECT_FALSE(outcome.tests[0].ok);
  EXPECT_NE(outcome.tests[0].detail.find("relative error"), std::string::npos);
  const auto findings = outcome.findings.finish();
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, finding_code::kImprecise);
}

TEST(FloatSumJudge, PartialsAreJudgedBlockByBlock) {
  Stage stage;
  stage.launch.threads_per_block = 256;
  const auto values = exact_values(1000);  // four blocks, the last one short
  std::vector<float> partials;
  for (std::size_t start = 0; start < values.size(); start += 256) {
    const auto end = std::min(values.size(), start + 256);
    partials.push_back(std::accumulate(values.begin() + static_cast<long>(start),
                                       values.begin() + static_cast<long>(end), 0.0f));
  }
  ContractOutcome right;
  judge_result(stage, DataKind::kExact, values, partials, true, false, right);
  ASSERT_EQ(right.tests.size(), 1u);
  EXPECT_TRUE(right.tests[0].ok) << right.tests[0].detail;

  partials.back() += 1;  // the short block's sum is off
  ContractOutcome wrong;
  judge_result(stage, DataKind::kExact, values, partials, true, false, wrong);
  EXPECT_FALSE(wrong.tests[0].ok);
  EXPECT_NE(wrong.tests[0].detail.find("first bad: partial[3]"), std::string::npos) << wrong.tests[0].detail;
}

}  // namespace
}  // namespace cudojo::float_sum_internal

#include "check/findings.h"

#include <gtest/gtest.h>

#include <cstring>

namespace cudojo {
namespace {

ReferenceSum ref_of(double sum, double abs, std::int64_t terms) { return {sum, abs, terms}; }

float unwritten() {
  float value;
  std::memcpy(&value, &kUnwrittenPartialBits, sizeof value);
  return value;
}

TEST(Findings, ExactDataIsJudgedBitwiseInexactByTolerance) {
  EXPECT_TRUE(judge_total("exact", 4, true, 6.0f, ref_of(6, 6, 4)).ok);
  EXPECT_FALSE(judge_total("exact", 4, true, 6.0000005f, ref_of(6, 6, 4)).ok);
  EXPECT_TRUE(judge_total("fractional", 4, false, 6.0000005f, ref_of(6, 6, 4)).ok);
}

TEST(Findings, LostIncrementsAreNamedLostUpdates) {
  FindingSet findings;
  const std::int64_t counts[] = {75, 85, 1048576};
  add_count_findings(counts, 1048576, findings);
  auto list = findings.finish();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "lost_updates");
  EXPECT_NE(list[0].message.find("75, 85"), std::string::npos);
}

TEST(Findings, TimedLaunchesThatAnswerFromBeforeAreStaleAnswers) {
  TimedResults results;
  record_timed_result(results, 100, 100, true);
  record_timed_result(results, 101, 100, false);  // the input changed, the answer did not
  record_timed_result(results, 102, 100, false);
  FindingSet findings;
  add_stale_answer_findings(4194304, results, findings);
  const auto list = findings.finish();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "stale_answer");
  EXPECT_NE(list[0].message.find("2 of the 3 timed launches"), std::string::npos) << list[0].message;
  EXPECT_NE(list[0].message.find("launch 2: expected 101, got 100"), std::string::npos) << list[0].message;

  TimedResults honest;
  for (int i = 0; i < 20; ++i) record_timed_result(honest, i, i, true);
  FindingSet none;
  add_stale_answer_findings(4194304, honest, none);
  EXPECT_TRUE(none.finish().empty());
}

TEST(Findings, ACounterThatWritesOrAddsAKnownNumberIsAConstantAnswer) {
  const std::int64_t threads = 4096 * 256, other = 2055 * 256;
  FindingSet wrote;  // atomicExch(c, 1048576) from one thread, the counter starting at 77
  add_constant_count_findings(77, threads, threads, other, threads - 77, wrote);
  ASSERT_EQ(wrote.finish().size(), 1u);
  EXPECT_EQ(wrote.finish()[0].code, "constant_answer");
  FindingSet added;  // atomicAdd(c, 1048576) from one thread: right on the stage's grid only
  add_constant_count_findings(77, threads, 77 + threads, other, threads, added);
  ASSERT_EQ(added.finish().size(), 1u);
  EXPECT_NE(added.finish()[0].message.find("grew by 1048576"), std::string::npos)
      << added.finish()[0].message;
  FindingSet honest;
  add_constant_count_findings(77, threads, 77 + threads, other, other, honest);
  EXPECT_TRUE(honest.finish().empty());
}

TEST(Findings, ExactCountsGiveNoFinding) {
  FindingSet findings;
  const std::int64_t counts[] = {1048576, 1048576};
  add_count_findings(counts, 1048576, findings);
  EXPECT_TRUE(findings.finish().empty());
}

TEST(Findings, LoudResultUnderLoudSharedIsUninitializedShared) {
  FindingSet findings;
  add_poison_findings(257, {{257.0f + kSharedPoisonLoud}, {254.0f}, {254.0f}}, findings);
  auto list = findings.finish();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "uninitialized_shared");
  EXPECT_NE(list[0].message.find("n = 257"), std::string::npos);
}

TEST(Findings, RaceThatDiffersBetweenPatternsIsNotUninitializedShared) {
  // A plain += loses a different number of updates each launch; that is not about shared memory.
  FindingSet findings;
  add_poison_findings(255, {{120.0f}, {97.0f}, {130.0f}}, findings);
  EXPECT_TRUE(findings.finish().empty());
}

TEST(Findings, LoudResultUnderLoudGuardIsOutOfBounds) {
  FindingSet findings;
  add_poison_findings(255, {{300.0f + 1000.0f}, {300.0f + 1000.0f}, {300.0f + kGuardLoud}}, findings);
  auto list = findings.finish();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "out_of_bounds");
}

TEST(Findings, QuietDifferenceUnderTheGuardIsNotOutOfBounds) {
  // A kernel reading stale shared memory differs between any two launches; only a loud guard
  // result proves a read past N.
  FindingSet findings;
  add_poison_findings(255, {{300.0f}, {300.0f}, {301.0f}}, findings);
  EXPECT_FALSE(findings.has("out_of_bounds"));
}

TEST(Findings, StableResultGivesNoPoisonFinding) {
  FindingSet findings;
  add_poison_findings(255, {{300.0f}, {300.0f}, {300.0f}}, findings);
  EXPECT_TRUE(findings.finish().empty());
}

TEST(Findings, UnwrittenPartialIsNotLoud) {
  FindingSet findings;
  add_poison_findings(255, {{1.0f, unwritten()}, {1.0f, unwritten()}, {1.0f, unwritten()}}, findings);
  EXPECT_TRUE(findings.finish().empty());
}

TEST(Findings, SameCodeAtSeveralSizesIsOneFindingListingTheSizes) {
  FindingSet findings;
  for (std::int64_t n : {1, 255, 257})
    add_poison_findings(n, {{kSharedPoisonLoud}, {2.0f}, {2.0f}}, findings);
  auto list = findings.finish();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_NE(list[0].message.find("n = 1, 255, 257"), std::string::npos) << list[0].message;
}

TEST(Findings, InputWritesAreInputModified) {
  FindingSet findings;
  add_input_findings(1000, 0, 1000, findings);
  ASSERT_TRUE(findings.has("input_modified"));
  FindingSet none;
  add_input_findings(1000, -1, 0, none);
  EXPECT_TRUE(none.finish().empty());
}

TEST(Findings, TotalInPartialZeroIsPartialContract) {
  // Four blocks of one value each (1, 2, 3, 4); the kernel put the total in slot 0 only.
  std::vector<ReferenceSum> blocks = {ref_of(1, 1, 1), ref_of(2, 2, 1), ref_of(3, 3, 1), ref_of(4, 4, 1)};
  std::vector<float> partial = {10.0f, unwritten(), unwritten(), unwritten()};
  auto analysis = analyse_partials(partial, blocks, true, ref_of(10, 10, 4));
  EXPECT_TRUE(analysis.slot0_holds_total);
  EXPECT_EQ(analysis.unwritten, 3);
  FindingSet findings;
  add_partial_findings(4, analysis, findings);
  auto list = findings.finish();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "partial_contract");
  EXPECT_NE(list[0].message.find("partial[0] holds the sum of the whole array"), std::string::npos);
  EXPECT_FALSE(judge_partials("exact", 4, analysis, ref_of(10, 10, 4)).ok);
}

TEST(Findings, TotalInPartialZeroWithZerosElsewhereIsStillWrong) {
  // The case a total-only judge accepts: the slots add up to the total.
  std::vector<ReferenceSum> blocks = {ref_of(1, 1, 1), ref_of(2, 2, 1), ref_of(3, 3, 1), ref_of(4, 4, 1)};
  std::vector<float> partial = {10.0f, 0.0f, 0.0f, 0.0f};
  auto analysis = analyse_partials(partial, blocks, true, ref_of(10, 10, 4));
  EXPECT_DOUBLE_EQ(analysis.host_total, 10.0);
  TestResult test = judge_partials("exact", 4, analysis, ref_of(10, 10, 4));
  EXPECT_FALSE(test.ok);
  EXPECT_DOUBLE_EQ(test.got, test.expected);  // the total alone would have passed
}

TEST(Findings, UnwrittenSlotsArePartialContract) {
  std::vector<ReferenceSum> blocks = {ref_of(1, 1, 1), ref_of(2, 2, 1)};
  std::vector<float> partial = {1.0f, unwritten()};
  auto analysis = analyse_partials(partial, blocks, true, ref_of(3, 3, 2));
  EXPECT_FALSE(analysis.slot0_holds_total);
  EXPECT_EQ(analysis.first_bad_block, 1);
  FindingSet findings;
  add_partial_findings(2, analysis, findings);
  EXPECT_TRUE(findings.has("partial_contract"));
}

TEST(Findings, RightBlockZeroWithinTheTotalsToleranceIsNotTheTotal) {
  // Signed data: the total is near zero and its tolerance (from sum|x|) covers block 0's own sum.
  std::vector<ReferenceSum> blocks = {ref_of(5, 100, 256), ref_of(-5, 100, 256)};
  std::vector<float> partial = {5.0f, -5.0f};
  auto analysis = analyse_partials(partial, blocks, false, ref_of(0, 200, 512));
  EXPECT_FALSE(analysis.slot0_holds_total);
  FindingSet findings;
  add_partial_findings(512, analysis, findings);
  EXPECT_TRUE(findings.finish().empty());
}

TEST(Findings, RightPartialsPass) {
  std::vector<ReferenceSum> blocks = {ref_of(1, 1, 1), ref_of(2, 2, 1)};
  std::vector<float> partial = {1.0f, 2.0f};
  auto analysis = analyse_partials(partial, blocks, true, ref_of(3, 3, 2));
  EXPECT_TRUE(judge_partials("exact", 2, analysis, ref_of(3, 3, 2)).ok);
}

TEST(Findings, DisagreeingRunsOnExactDataAreNondeterministic) {
  FindingSet findings;
  const std::uint64_t prints[] = {1, 1, 2};
  add_determinism_findings(4194304, prints, findings);
  EXPECT_TRUE(findings.has("nondeterministic"));
  const std::uint64_t same[] = {7, 7, 7};
  FindingSet none;
  add_determinism_findings(4194304, same, none);
  EXPECT_TRUE(none.finish().empty());
}

TEST(Findings, FingerprintSeesEveryBit) {
  const float a[] = {1.0f, 2.0f};
  const float b[] = {1.0f, 2.0000002f};
  const float c[] = {2.0f, 1.0f};
  EXPECT_NE(fingerprint(a), fingerprint(b));
  EXPECT_NE(fingerprint(a), fingerprint(c));
  EXPECT_EQ(fingerprint(a), fingerprint(a));
}

}  // namespace
}  // namespace cudojo

namespace cudojo {
namespace {

TEST(SpeedOfLight, FasterThanThePeakAllowsIsImplausible) {
  // 16 MiB at 4000 GB/s takes 0.0042 ms; 0.001 ms is impossible.
  auto finding = speed_of_light_finding(16777216.0, 0.001, 4000.0);
  ASSERT_TRUE(finding.has_value());
  EXPECT_EQ(finding->code, "implausible_time");
  EXPECT_FALSE(speed_of_light_finding(16777216.0, 0.0042, 4000.0).has_value());
  // Within the margin: a kernel a little faster than the judge's own probe is believable.
  EXPECT_FALSE(speed_of_light_finding(16777216.0, 0.0042 / 1.1, 4000.0).has_value());
  EXPECT_FALSE(speed_of_light_finding(0, 0.001, 4000.0).has_value());
}

}  // namespace
}  // namespace cudojo

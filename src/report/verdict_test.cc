#include "report/verdict.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

JudgeFacts clean() {
  JudgeFacts facts;
  facts.compiled = true;
  facts.all_tests_passed = true;
  facts.gate_passed = true;
  return facts;
}

TEST(Verdict, CleanRunIsAccepted) { EXPECT_EQ(decide_verdict(clean()), Verdict::kAccepted); }

TEST(Verdict, CompileErrorOutranksEverything) {
  JudgeFacts facts = clean();
  facts.compiled = false;
  facts.timed_out = true;
  facts.device_present = false;
  EXPECT_EQ(decide_verdict(facts), Verdict::kCompileError);
}

TEST(Verdict, NoDeviceAfterASuccessfulCompile) {
  JudgeFacts facts = clean();
  facts.device_present = false;
  EXPECT_EQ(decide_verdict(facts), Verdict::kNoDevice);
}

TEST(Verdict, RuntimeErrorOutranksTimeLimit) {
  JudgeFacts facts = clean();
  facts.runtime_fault = true;
  facts.timed_out = true;
  EXPECT_EQ(decide_verdict(facts), Verdict::kRuntimeError);
}

TEST(Verdict, TimeLimitOutranksWrongAnswer) {
  JudgeFacts facts = clean();
  facts.timed_out = true;
  facts.all_tests_passed = false;
  EXPECT_EQ(decide_verdict(facts), Verdict::kTimeLimitExceeded);
}

TEST(Verdict, FindingsMakeAWrongAnswerEvenWhenNumbersMatched) {
  JudgeFacts facts = clean();
  facts.has_findings = true;
  EXPECT_EQ(decide_verdict(facts), Verdict::kWrongAnswer);
}

TEST(Verdict, WrongAnswerOutranksTooSlow) {
  JudgeFacts facts = clean();
  facts.all_tests_passed = false;
  facts.gate_passed = false;
  EXPECT_EQ(decide_verdict(facts), Verdict::kWrongAnswer);
}

TEST(Verdict, FailedGateIsTooSlow) {
  JudgeFacts facts = clean();
  facts.gate_passed = false;
  EXPECT_EQ(decide_verdict(facts), Verdict::kTooSlow);
}

TEST(Verdict, InternalErrorIsNeverTheLearners) {
  JudgeFacts facts = clean();
  facts.internal_error = true;
  EXPECT_EQ(decide_verdict(facts), Verdict::kInternalError);
  EXPECT_FALSE(is_learner_verdict(Verdict::kInternalError));
  EXPECT_FALSE(is_learner_verdict(Verdict::kNoDevice));
}

TEST(Verdict, ExitCodes) {
  EXPECT_EQ(exit_code(Verdict::kAccepted), 0);
  for (auto v : {Verdict::kCompileError, Verdict::kRuntimeError, Verdict::kTimeLimitExceeded,
                 Verdict::kWrongAnswer, Verdict::kTooSlow}) {
    EXPECT_EQ(exit_code(v), 1) << to_string(v);
  }
  EXPECT_EQ(exit_code(Verdict::kNoDevice), 2);
  EXPECT_EQ(exit_code(Verdict::kInternalError), 2);
}

TEST(Verdict, NamesRoundTripAndCombineKeepsTheHigher) {
  for (auto v : {Verdict::kInternalError, Verdict::kCompileError, Verdict::kNoDevice, Verdict::kRuntimeError,
                 Verdict::kTimeLimitExceeded, Verdict::kWrongAnswer, Verdict::kTooSlow, Verdict::kAccepted}) {
    EXPECT_EQ(parse_verdict(to_string(v)), v);
  }
  EXPECT_EQ(to_string(Verdict::kTimeLimitExceeded), "time_limit_exceeded");
  EXPECT_EQ(combine(Verdict::kTooSlow, Verdict::kWrongAnswer), Verdict::kWrongAnswer);
  EXPECT_FALSE(parse_verdict("ok").has_value());
}

}  // namespace
}  // namespace cudojo

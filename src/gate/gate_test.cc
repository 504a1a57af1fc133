#include "gate/gate.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TimeStats median(double ms) { return TimeStats{ms, ms, ms, 20}; }

TEST(Gate, CorrectnessGatePassesOnceReached) {
  auto gate = apply_gate(GateSpec{GateRule::kCorrectness, 2.0}, std::nullopt, std::nullopt);
  EXPECT_TRUE(gate.passed);
  EXPECT_FALSE(gate.value.has_value());
}

TEST(Gate, TimeRatioAtTheLimitPassesAboveItFails) {
  GateSpec spec{GateRule::kTimeRatio, 2.0};
  EXPECT_TRUE(apply_gate(spec, median(0.02), median(0.01)).passed);
  auto slow = apply_gate(spec, median(0.0201), median(0.01));
  EXPECT_FALSE(slow.passed);
  EXPECT_NEAR(*slow.value, 2.01, 1e-9);
  EXPECT_EQ(slow.rule, "time_ms.median <= 2 x reference");
}

TEST(Gate, TimeGateWithoutTimesFails) {
  EXPECT_FALSE(apply_gate(GateSpec{GateRule::kTimeRatio, 2.0}, std::nullopt, median(1)).passed);
  EXPECT_FALSE(apply_gate(GateSpec{GateRule::kTimeRatio, 2.0}, median(1), median(0)).passed);
}

}  // namespace
}  // namespace cudojo

namespace cudojo {
namespace {

TEST(Gate, SmThroughputFloorIsRelativeToTheReference) {
  GateSpec spec{GateRule::kTimeRatio, 2.0, 50.0 / 91.0};
  const TimeStats reference{0.010, 0.010, 0.010, 20};
  const TimeStats a_bit_slower{0.015, 0.015, 0.015, 20};  // within the 2x time gate
  // The course's own numbers on an H200: tree 42.8%, atomic kernel 0.22%.
  EXPECT_TRUE(apply_gate(spec, a_bit_slower, reference, std::make_pair(42.8, 42.8)).passed);
  EXPECT_FALSE(apply_gate(spec, a_bit_slower, reference, std::make_pair(0.22, 42.8)).passed);
  EXPECT_TRUE(apply_gate(spec, a_bit_slower, reference, std::make_pair(23.6, 42.8)).passed);  // floor 23.5
  auto untimed = apply_gate(spec, a_bit_slower, reference, std::nullopt);
  EXPECT_TRUE(untimed.passed);
  EXPECT_NE(untimed.rule.find("gated on time alone"), std::string::npos);
}

TEST(Gate, AKernelFasterThanTheReferencePassesWhateverItsSmThroughput) {
  GateSpec spec{GateRule::kTimeRatio, 2.0, 50.0 / 91.0};
  const TimeStats reference{0.010, 0.010, 0.010, 20};
  const TimeStats faster{0.008, 0.008, 0.008, 20};
  EXPECT_TRUE(apply_gate(spec, faster, reference, std::make_pair(12.0, 42.8)).passed);
}

}  // namespace
}  // namespace cudojo

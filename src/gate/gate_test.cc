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
  const TimeStats fast{0.01, 0.01, 0.01, 20};
  // The course's own numbers on an H200: tree 42.8%, atomic kernel 0.22%.
  EXPECT_TRUE(apply_gate(spec, fast, fast, std::make_pair(42.8, 42.8)).passed);
  EXPECT_FALSE(apply_gate(spec, fast, fast, std::make_pair(0.22, 42.8)).passed);
  EXPECT_TRUE(apply_gate(spec, fast, fast, std::make_pair(23.6, 42.8)).passed);  // 0.5495 x 42.8 = 23.5
  auto untimed = apply_gate(spec, fast, fast, std::nullopt);
  EXPECT_TRUE(untimed.passed);
  EXPECT_NE(untimed.rule.find("gated on time alone"), std::string::npos);
}

}  // namespace
}  // namespace cudojo

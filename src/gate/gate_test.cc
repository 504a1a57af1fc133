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

// The profile after timing measures SM throughput only where apply_gate will read it.
TEST(Gate, SmThroughputIsReadOnlyOnAFloorStageForAKernelSlowerThanTheReference) {
  GateSpec floor;
  floor.rule = GateRule::kTimeRatio;
  floor.max_time_ratio = 1.5;
  floor.min_sm_throughput_ratio = 0.8;
  EXPECT_FALSE(gate_reads_sm_throughput(floor, 0.97));
  EXPECT_FALSE(gate_reads_sm_throughput(floor, 1.0));
  EXPECT_TRUE(gate_reads_sm_throughput(floor, 1.2));
  EXPECT_TRUE(gate_reads_sm_throughput(floor, 3.0)) << "a too-slow kernel's rule still shows its figure";
  EXPECT_TRUE(gate_reads_sm_throughput(floor, std::nullopt)) << "an unknown ratio could be either side";
  GateSpec no_floor = floor;
  no_floor.min_sm_throughput_ratio.reset();
  EXPECT_FALSE(gate_reads_sm_throughput(no_floor, 1.2));
  // And apply_gate agrees: below 1 the rule never mentions SM throughput.
  const TimeStats fast{0.97, 0.97, 0.97, 20}, reference{1.0, 1.0, 1.0, 20};
  EXPECT_EQ(apply_gate(floor, fast, reference).rule.find("SM throughput"), std::string::npos);
  EXPECT_NE(apply_gate(floor, TimeStats{1.2, 1.2, 1.2, 20}, reference).rule.find("SM throughput"),
            std::string::npos);
}

}  // namespace
}  // namespace cudojo

#include "run/judge.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

Report measured_report() {
  Report report;
  report.stage = "reduction/3";
  report.metrics.reference_time_ms = TimeStats{0.040, 0.039, 0.041, 20};
  report.metrics.reference_kernel = KernelMetrics{40.0, 10.0, 0.04, 16384};
  return report;
}

TEST(GateReference, SameRunFiguresWithoutACalibration) {
  const GateReference reference = choose_gate_reference(measured_report(), std::nullopt);
  EXPECT_FALSE(reference.calibrated);
  EXPECT_DOUBLE_EQ(reference.time_ms->median_ms, 0.040);
  EXPECT_DOUBLE_EQ(*reference.sm_throughput_pct, 40.0);
}

TEST(GateReference, CalibratedFiguresWinForTheirStage) {
  Calibration calibration{"NVIDIA H200", "sm_90", "13.0", "then", 4200.0, {}};
  calibration.stages["reduction/3"] = {4194304, TimeStats{0.0334, 0.033, 0.034, 20}, 502.0,
                                       KernelMetrics{44.0, 10.9, 0.0333, 16384}};
  const GateReference reference = choose_gate_reference(measured_report(), calibration);
  EXPECT_TRUE(reference.calibrated);
  EXPECT_DOUBLE_EQ(reference.time_ms->median_ms, 0.0334);
  EXPECT_DOUBLE_EQ(*reference.sm_throughput_pct, 44.0);
}

TEST(GateReference, ACalibrationWithoutThisStageFallsBackToTheSameRun) {
  Calibration calibration{"NVIDIA H200", "sm_90", "13.0", "then", 4200.0, {}};
  calibration.stages["reduction/2"] = {4194304, TimeStats{7.36, 7.35, 7.37, 20}, 2.3, std::nullopt};
  const GateReference reference = choose_gate_reference(measured_report(), calibration);
  EXPECT_FALSE(reference.calibrated);
  EXPECT_DOUBLE_EQ(reference.time_ms->median_ms, 0.040);
}

}  // namespace
}  // namespace cudojo

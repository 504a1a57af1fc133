#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gate/calibration.h"

namespace cudojo {
namespace {

const std::optional<TimeStats> kSameRunTime = TimeStats{0.040, 0.039, 0.041, 20};
const std::optional<KernelMetrics> kSameRunMetrics = KernelMetrics{40.0, 10.0, 0.04, 16384};

GateReference choose(const std::optional<Calibration>& calibration) {
  return choose_gate_reference("reduction/3", calibration, kSameRunTime, kSameRunMetrics);
}

TEST(GateReference, SameRunFiguresWithoutACalibration) {
  const GateReference reference = choose(std::nullopt);
  EXPECT_FALSE(reference.calibrated);
  EXPECT_DOUBLE_EQ(reference.time_ms->median_ms, 0.040);
  EXPECT_DOUBLE_EQ(*reference.sm_throughput_pct, 40.0);
}

TEST(GateReference, CalibratedFiguresWinForTheirStage) {
  Calibration calibration{"NVIDIA H200", "sm_90", "13.0", "then", 4200.0, {}};
  calibration.stages["reduction/3"] = {4194304, TimeStats{0.0334, 0.033, 0.034, 20}, 502.0,
                                       KernelMetrics{44.0, 10.9, 0.0333, 16384}};
  const GateReference reference = choose(calibration);
  EXPECT_TRUE(reference.calibrated);
  EXPECT_DOUBLE_EQ(reference.time_ms->median_ms, 0.0334);
  EXPECT_DOUBLE_EQ(*reference.sm_throughput_pct, 44.0);
}

TEST(GateReference, ACalibrationWithoutThisStageFallsBackToTheSameRun) {
  Calibration calibration{"NVIDIA H200", "sm_90", "13.0", "then", 4200.0, {}};
  calibration.stages["reduction/2"] = {4194304, TimeStats{7.36, 7.35, 7.37, 20}, 2.3, std::nullopt};
  const GateReference reference = choose(calibration);
  EXPECT_FALSE(reference.calibrated);
  EXPECT_DOUBLE_EQ(reference.time_ms->median_ms, 0.040);
}

}  // namespace
}  // namespace cudojo

namespace cudojo {
namespace {

class CalibrationLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cudojo-calibration-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CalibrationLookupTest, NamesTheFileAndThePreviousStage) {
  Calibration calibration{"NVIDIA H200", "sm_90", "13.0", "2026-11-29 22:05:47 UTC", 4200.0, {}};
  calibration.stages["reduction/2"] = {4194304, TimeStats{7.36, 7.35, 7.37, 20}, 2.3,
                                       KernelMetrics{0.2, 1.0, 7.3, 131072}};
  calibration.stages["reduction/3"] = {4194304, TimeStats{0.0334, 0.033, 0.034, 20}, 502.0, std::nullopt};
  save_calibration(dir_, calibration);
  const CalibrationLookup lookup = look_up_calibration(dir_, "NVIDIA H200", "reduction/3");
  ASSERT_TRUE(lookup.calibration);
  EXPECT_EQ(lookup.use.file, (dir_ / "nvidia-h200.json").string());
  EXPECT_EQ(lookup.use.previous_stage, "reduction/2");
  EXPECT_DOUBLE_EQ(lookup.use.previous_reference_time_ms->median_ms, 7.36);
  EXPECT_DOUBLE_EQ(*lookup.use.previous_sm_throughput_pct, 0.2);
}

TEST_F(CalibrationLookupTest, ABrokenFileIsNamedAndIgnored) {
  std::ofstream(dir_ / "nvidia-h200.json") << "{ not json";
  const CalibrationLookup lookup = look_up_calibration(dir_, "NVIDIA H200", "reduction/3");
  EXPECT_FALSE(lookup.calibration);
  EXPECT_NE(lookup.use.note.find("calibration ignored"), std::string::npos);
  EXPECT_TRUE(lookup.use.file.empty());
}

TEST_F(CalibrationLookupTest, NoFolderOrAnotherGpuIsNoCalibration) {
  EXPECT_FALSE(look_up_calibration("", "NVIDIA H200", "reduction/3").calibration);
  EXPECT_FALSE(look_up_calibration(dir_, "NVIDIA B200", "reduction/3").calibration);
}

}  // namespace
}  // namespace cudojo

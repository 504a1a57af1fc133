#include "gate/calibration.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace cudojo {
namespace {

namespace fs = std::filesystem;

class CalibrationFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cudojo_calibration_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Calibration sample() {
  Calibration calibration{"NVIDIA H200", "sm_90", "13.0", "2026-11-29 21:00 UTC", 4200.0, {}};
  calibration.stages["reduction/3"] = {4194304, TimeStats{0.0334, 0.0330, 0.0340, 20}, 502.3,
                                       KernelMetrics{44.0, 10.9, 0.0333, 16384}};
  calibration.stages["reduction/2"] = {4194304, TimeStats{7.36, 7.35, 7.37, 20}, 2.3, std::nullopt};
  return calibration;
}

TEST(Calibration, SlugIsLowerCaseWordsJoinedByDashes) {
  EXPECT_EQ(gpu_slug("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(gpu_slug("NVIDIA GeForce RTX 4090 (laptop)"), "nvidia-geforce-rtx-4090-laptop");
  EXPECT_EQ(gpu_slug("../../etc"), "etc");  // never a path
  EXPECT_EQ(gpu_slug(""), "unknown-gpu");
}

TEST(Calibration, FolderSitsBesideTheCourse) {
  unsetenv("CUDOJO_CALIBRATION");
  EXPECT_EQ(default_calibration_dir("/srv/cudojo/course"), fs::path("/srv/cudojo/calibration"));
  EXPECT_EQ(default_calibration_dir("/srv/cudojo/course/"), fs::path("/srv/cudojo/calibration"));
}

TEST_F(CalibrationFiles, SavedFilesLoadBackForTheSameGpuOnly) {
  const fs::path file = save_calibration(dir_, sample());
  EXPECT_EQ(file.filename(), "nvidia-h200.json");
  auto loaded = load_calibration(dir_, "NVIDIA H200");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_DOUBLE_EQ(loaded->stages.at("reduction/3").reference_time_ms.median_ms, 0.0334);
  EXPECT_DOUBLE_EQ(loaded->stages.at("reduction/3").reference_metrics->sm_throughput_pct, 44.0);
  EXPECT_FALSE(loaded->stages.at("reduction/2").reference_metrics.has_value());
  EXPECT_FALSE(load_calibration(dir_, "NVIDIA H100 80GB HBM3").has_value());  // no file: measure instead
}

TEST_F(CalibrationFiles, ABaselineTimeTravelsWithItsName) {
  Calibration calibration = sample();
  calibration.stages["reduction/6"].n = 1 << 26;
  calibration.stages["reduction/6"].baseline_name = "CUB DeviceReduce::Sum";
  calibration.stages["reduction/6"].baseline_time_ms = TimeStats{0.0655, 0.065, 0.066, 20};
  save_calibration(dir_, calibration);
  const auto loaded = load_calibration(dir_, "NVIDIA H200");
  ASSERT_TRUE(loaded.has_value());
  const StageCalibration& stage = loaded->stages.at("reduction/6");
  ASSERT_TRUE(stage.baseline_time_ms.has_value());
  EXPECT_DOUBLE_EQ(stage.baseline_time_ms->median_ms, 0.0655);
  EXPECT_EQ(stage.baseline_name, "CUB DeviceReduce::Sum");
  EXPECT_FALSE(loaded->stages.at("reduction/3").baseline_time_ms.has_value());
}

TEST_F(CalibrationFiles, ABrokenFileIsAnErrorNotSilentlyIgnored) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "nvidia-h200.json") << "{ not json";
  EXPECT_THROW(load_calibration(dir_, "NVIDIA H200"), CalibrationError);
  std::ofstream(dir_ / "nvidia-h200.json") << R"({"gpu": "NVIDIA H200"})";
  EXPECT_THROW(load_calibration(dir_, "NVIDIA H200"), CalibrationError);
}

TEST_F(CalibrationFiles, AFileForAnotherGpuUnderThisNameIsRefused) {
  Calibration other = sample();
  other.gpu = "NVIDIA H200";
  save_calibration(dir_, other);
  fs::rename(dir_ / "nvidia-h200.json", dir_ / "nvidia-h100.json");
  EXPECT_THROW(load_calibration(dir_, "NVIDIA H100"), CalibrationError);
}

TEST(Calibration, AStagesFiguresAreReadOnlyAtTheSizeTheyWereMeasuredAt) {
  Calibration calibration;
  calibration.stages["reduction/3"].n = 4194304;
  calibration.stages["reduction/3"].reference_time_ms.median_ms = 0.021;
  const StageCalibration* found = calibrated_stage_at(calibration, "reduction/3", 4194304);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->reference_time_ms.median_ms, 0.021);
  EXPECT_EQ(calibrated_stage_at(calibration, "reduction/3", 1048576), nullptr)
      << "a stage whose size changed";
  EXPECT_EQ(calibrated_stage_at(calibration, "reduction/4", 4194304), nullptr) << "a stage not calibrated";
}

}  // namespace
}  // namespace cudojo

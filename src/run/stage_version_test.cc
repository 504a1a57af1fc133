#include "run/stage_version.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "check/datasets.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;

// A stage folder in a fresh temporary place, with the files a version reads.
class StageVersionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("cudojo-version-{}-{}", getpid(), counter_++);
    fs::create_directories(root_ / "stage");
    fs::create_directories(root_ / "calibration");
    write("stage/stage.toml", "id = \"reduction/3\"\n");
    write("stage/reference.cu", "__global__ void reduce() {}\n");
    write("stage/lesson.md", "# Lesson\n");
    write("stage/starter.cu", "__global__ void reduce() {}\n");
    stage_.id = "reduction/3";
    stage_.directory = root_ / "stage";
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(root_ / name, std::ios::binary) << text;
  }
  StageVersion version() { return compute_stage_version(stage_, root_ / "calibration"); }

  static inline int counter_ = 0;
  fs::path root_;
  Stage stage_;
};

TEST_F(StageVersionTest, SameFilesGiveTheSameVersion) {
  const StageVersion first = version();
  EXPECT_EQ(first.digest.size(), 16u);
  EXPECT_EQ(first.digest, version().digest);
  EXPECT_EQ(first.calibration, "none");
  EXPECT_EQ(first.data_generator, kDataGeneratorVersion);
  EXPECT_EQ(first.judge_rules, kJudgeRulesVersion);
}

TEST_F(StageVersionTest, AGateChangeIsANewVersion) {
  const StageVersion before = version();
  write("stage/stage.toml", "id = \"reduction/3\"\n[gate]\nmax_time_ratio = 1.5\n");
  const StageVersion after = version();
  EXPECT_NE(before.digest, after.digest);
  EXPECT_NE(before.stage_files, after.stage_files);
}

TEST_F(StageVersionTest, AReferenceInAnyLanguageIsPartOfIt) {
  const StageVersion before = version();
  write("stage/reference.rs", "fn reduce() {}\n");
  EXPECT_NE(before.digest, version().digest);
}

TEST_F(StageVersionTest, LessonsAndStartersDoNotChangeIt) {
  const StageVersion before = version();
  write("stage/lesson.md", "# Lesson, a typo fixed\n");
  write("stage/starter.cu", "__global__ void reduce() { /* a hint */ }\n");
  EXPECT_EQ(before.digest, version().digest);
}

TEST_F(StageVersionTest, OnlyThisStagesCalibrationCounts) {
  write("calibration/nvidia-h200.json",
        R"({"gpu": "NVIDIA H200", "stages": {"reduction/3": {"n": 1}, "reduction/4": {"n": 2}}})");
  const StageVersion calibrated = version();
  EXPECT_NE(calibrated.calibration, "none");
  write("calibration/nvidia-h200.json",
        R"({"gpu": "NVIDIA H200", "stages": {"reduction/3": {"n": 1}, "reduction/4": {"n": 3}}})");
  EXPECT_EQ(calibrated.digest, version().digest);
  write("calibration/nvidia-h200.json",
        R"({"gpu": "NVIDIA H200", "stages": {"reduction/3": {"n": 5}, "reduction/4": {"n": 3}}})");
  EXPECT_NE(calibrated.digest, version().digest);
}

}  // namespace
}  // namespace cudojo

#include "run/protocol.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TEST(Protocol, BuiltKernelsSurviveTheJsonTripByteForByte) {
  // Every length modulo 3 (base64 padding), and every byte value including NUL.
  for (std::size_t length : {0u, 1u, 2u, 3u, 4u, 255u, 256u, 257u}) {
    BuiltKernel kernel;
    kernel.lowered_name = "_Z6reducePKfPfi";
    for (std::size_t i = 0; i < length; ++i) kernel.image.push_back(static_cast<char>(i * 37 % 256));
    const BuiltKernel back = nlohmann::json::parse(nlohmann::json(kernel).dump()).get<BuiltKernel>();
    EXPECT_EQ(back.lowered_name, kernel.lowered_name);
    EXPECT_EQ(back.image, kernel.image) << "length " << length;
  }
}

TEST(Protocol, AJobCarriesItsBuildsOrNone) {
  Job job;
  job.source = "__global__ void reduce(const float*, float*, int) {}";
  job.file_name = "mine.cu";
  job.mode = WorkerMode::kSanitize;
  Job back = nlohmann::json::parse(nlohmann::json(job).dump()).get<Job>();
  EXPECT_FALSE(back.submission_build);
  EXPECT_FALSE(back.reference_build);
  job.submission_build = BuiltKernel{"reduce", {'\x7f', 'E', 'L', 'F', '\0', '\x01'}};
  back = nlohmann::json::parse(nlohmann::json(job).dump()).get<Job>();
  ASSERT_TRUE(back.submission_build);
  EXPECT_EQ(back.submission_build->image, job.submission_build->image);
  EXPECT_FALSE(back.reference_build);
  EXPECT_EQ(back.mode, WorkerMode::kSanitize);
}

TEST(Protocol, AJobCarriesWhereTheCalibrationIs) {
  Job job;
  job.calibration_dir = "/srv/course/calibration";
  job.gpu_turns = true;
  const Job back = nlohmann::json::parse(nlohmann::json(job).dump()).get<Job>();
  EXPECT_EQ(back.calibration_dir, "/srv/course/calibration");
  EXPECT_TRUE(back.gpu_turns);
}

TEST(Protocol, ABrokenBuildIsAnErrorNotGarbage) {
  EXPECT_ANY_THROW((nlohmann::json{{"lowered_name", "reduce"}, {"image_base64", "abc"}}.get<BuiltKernel>()));
  EXPECT_ANY_THROW((nlohmann::json{{"lowered_name", "reduce"}, {"image_base64", "@@@@"}}.get<BuiltKernel>()));
}

}  // namespace
}  // namespace cudojo

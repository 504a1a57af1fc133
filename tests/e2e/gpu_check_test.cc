// End-to-end tests that need a GPU. Without one they skip, saying why (ctest label "gpu").
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace cudojo {
namespace {

using testing::run_cli;
using testing::submission;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no CUDA device here (" << cudaGetErrorName(status)
                   << "); run scripts/gpu-check.sh on a machine with an NVIDIA GPU";
    }
  }
  static nlohmann::json check(const std::string& stage, const std::string& file) {
    auto result = run_cli("check " + stage + " " + file + " --json");
    return nlohmann::json::parse(result.out);
  }
  static std::string reference(const std::string& folder) {
    return testing::course_file(folder + "/reference.cu");
  }
};

TEST_F(Gpu, EveryReferenceIsAccepted) {
  const std::pair<const char*, const char*> stages[] = {{"reduction/1", "01-race"},
                                                        {"reduction/2", "02-atomic-sum"},
                                                        {"reduction/3", "03-block-tree"},
                                                        {"reduction/4", "04-warp-shuffle"}};
  for (const auto& [stage, folder] : stages) {
    auto report = check(stage, reference(folder));
    EXPECT_EQ(report["verdict"], "accepted") << stage << ": " << report["message"];
  }
}

TEST_F(Gpu, EarlyReturnIsCaughtAsUninitializedShared) {
  auto report = check("reduction/3", submission("reduction-3/early_return.cu"));
  EXPECT_EQ(report["verdict"], "wrong_answer");
  bool found = false;
  for (const auto& f : report["findings"]) found |= f["code"] == "uninitialized_shared";
  EXPECT_TRUE(found) << report["findings"].dump();
}

TEST_F(Gpu, FaultIsARuntimeErrorAndTheNextCheckWorks) {
  auto fault = check("reduction/2", submission("reduction-2/illegal_address.cu"));
  EXPECT_EQ(fault["verdict"], "runtime_error");
  EXPECT_EQ(fault["error_name"], "cudaErrorIllegalAddress");
  auto next = check("reduction/2", reference("02-atomic-sum"));
  EXPECT_EQ(next["verdict"], "accepted");
}

}  // namespace
}  // namespace cudojo

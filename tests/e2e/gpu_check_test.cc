// End-to-end tests that need a GPU. Without one they skip, saying why (ctest label "gpu").
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compile/nvrtc_compiler.h"
#include "run/gpu_profiler.h"
#include "run/judge.h"
#include "run_cli.h"
#include "stage/stage.h"

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

// A server's slot on a GPU profiles through the GPU's one profiling process, which keeps CUPTI's
// range profiler enabled from one job to the next: the second profile skips the first start, both
// measure alike, a kernel that faults in another process leaves the next profile measured by CUPTI
// (a profile that failed after it is tried once more), and Nsight Compute (hot spots) still counts, the
// process being let go first and started again for the next profile.
TEST_F(Gpu, AServerSlotProfilesThroughTheGpusProfilingProcessAndNcuStillCounts) {
  const std::filesystem::path folder = std::filesystem::path(reference("05-warp-atomic")).parent_path();
  const Stage stage = load_stage(folder);
  auto text = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  };
  WorkerSettings workers;
  workers.worker_executable = testing::cudojo_binary();
  workers.keep_alive = true;
  PreparedWorkers warm(workers);
  GpuLease lease;
  GpuProfiler profiler(testing::cudojo_binary(), {}, kDefaultLimits);
  auto judge = [&](const std::string& source, bool hot_spots = false) {
    CheckRequest request;
    request.stage = &stage;
    request.source = source;
    request.workers = workers;
    request.cuda_include_dir = default_cuda_include_dir();
    request.lease = &lease;
    request.gpu_profiler = &profiler;
    request.hot_spots = hot_spots;
    return run_check(request, warm);
  };
  // A stage with no SM-throughput floor: every profile uses one configuration, so the second finds
  // the profiler as the first left it (on a floor stage a ratio either side of 1 switches it).
  const std::string correct = text(reference("05-warp-atomic"));
  const Report first = judge(correct);
  const Report second = judge(correct);
  // The same kernel, made to write through a null pointer first: another process's fault, between
  // two profiles of the kept profiler.
  std::string faulting = correct;
  const std::string body_start = "int N) {";
  ASSERT_NE(faulting.find(body_start), std::string::npos);
  faulting.insert(faulting.find(body_start) + body_start.size(), "\n    *(volatile float*)nullptr = 1.0f;");
  const Report fault = judge(faulting);
  const Report third = judge(correct);
  for (const Report* report : {&first, &second, &third}) {
    ASSERT_EQ(report->verdict, Verdict::kAccepted) << report->message;
    EXPECT_EQ(report->metrics.metrics_source, "cupti") << report->metrics.metrics_note;
    ASSERT_TRUE(report->metrics.kernel.has_value());
    EXPECT_GT(report->metrics.kernel->dram_throughput_pct, 0.0);  // an atomic-bound kernel reads little
  }
  EXPECT_EQ(fault.verdict, Verdict::kRuntimeError) << fault.message;
  EXPECT_NEAR(second.metrics.kernel->duration_ms, first.metrics.kernel->duration_ms,
              0.3 * first.metrics.kernel->duration_ms);
  const double first_pass = first.timings_ms.at("profile_first_pass");
  const double kept_pass = second.timings_ms.at("profile_first_pass");
  std::printf("first pass: %.1f ms with the profiler enabled now, %.1f ms kept enabled\n", first_pass,
              kept_pass);
  EXPECT_LT(kept_pass, first_pass) << "the profiler was not kept enabled between jobs";
  auto step = [](const Report& report, const char* name) {
    return report.timings_ms.count(name) ? report.timings_ms.at(name) : 0.0;
  };
  std::printf(
      "after another process's fault: CUPTI %s, a retry in the process of %.1f ms, in a fresh one of %.1f "
      "ms\n",
      third.metrics.metrics_source.c_str(), step(third, "profile_retry"), step(third, "gpu_profiler_retry"));
  const int before_ncu = profiler.started_processes();
  const Report with_hot_spots = judge(correct, true);
  ASSERT_EQ(with_hot_spots.verdict, Verdict::kAccepted) << with_hot_spots.message;
  ASSERT_TRUE(with_hot_spots.hot_spots.has_value());
  EXPECT_GT(with_hot_spots.hot_spots->samples, 0)
      << "ncu could not count: " << with_hot_spots.hot_spots->note;
  const Report after_ncu = judge(correct);
  EXPECT_EQ(after_ncu.metrics.metrics_source, "cupti") << after_ncu.metrics.metrics_note;
  EXPECT_EQ(profiler.started_processes(), before_ncu + 1)
      << "ncu ran without the profiling process let go first";
}

}  // namespace
}  // namespace cudojo

#include "measure/profiler.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include "common/limits.h"
#include "compile/nvrtc_compiler.h"
#include "gpu/gpu.h"

namespace cudojo {
namespace {

// The shape `ncu --csv --metrics ...` prints: one row per (kernel, metric), values with thousands
// separators, units per row.
constexpr const char* kNcuCsv =
    "==PROF== Connected to process 1234\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
    "Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler "
    "metrics\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"10.51\"\n"
    "\"0\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"usecond\",\"33.25\"\n"
    "\"0\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"42.80\"\n"
    "\"0\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"smsp__inst_executed_op_global_red.sum\",\"inst\",\"16,384\"\n"
    "\"1\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"0.22\"\n"
    "\"1\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"msecond\",\"7.36\"\n"
    "\"1\",\"1234\",\"cudojo\",\"h\",\"reduce\",\"1\",\"13\",\"(256, 1, 1)\",\"(16384, 1, 1)\",\"0\",\"9.0\","
    "\"Command line profiler metrics\",\"smsp__inst_executed_op_global_red.sum\",\"inst\",\"131,072\"\n";

TEST(NcuCsv, OneEntryPerKernelInIdOrderWithUnitsAndSeparators) {
  ProfileResult result = parse_ncu_csv(kNcuCsv);
  ASSERT_TRUE(result.ok) << result.error;
  ASSERT_EQ(result.kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(result.kernels[0].sm_throughput_pct, 42.80);
  EXPECT_DOUBLE_EQ(result.kernels[0].dram_throughput_pct, 10.51);
  EXPECT_NEAR(result.kernels[0].duration_ms, 0.03325, 1e-12);
  EXPECT_DOUBLE_EQ(result.kernels[0].global_atomics, 16384);
  EXPECT_DOUBLE_EQ(result.kernels[1].sm_throughput_pct, 0.22);
  EXPECT_NEAR(result.kernels[1].duration_ms, 7.36, 1e-12);
  EXPECT_DOUBLE_EQ(result.kernels[1].global_atomics, 131072);
}

TEST(NcuCsv, AMetricNcuPrintedNoRowForIsNotMeasuredNotZero) {
  // Kernel 1 has no DRAM row, kernel 0 has no atom row (red only): what is missing reads NaN,
  // what was printed keeps its value.
  ProfileResult result = parse_ncu_csv(kNcuCsv);
  ASSERT_EQ(result.kernels.size(), 2u);
  EXPECT_TRUE(std::isnan(result.kernels[1].dram_throughput_pct));
  EXPECT_DOUBLE_EQ(result.kernels[0].global_atomics, 16384);
}

TEST(NcuMetricList, SmThroughputOnlyWhenAsked) {
  EXPECT_EQ(ncu_metric_list(false).find("sm__throughput"), std::string::npos);
  EXPECT_NE(ncu_metric_list(false).find("dram__throughput"), std::string::npos);
  EXPECT_EQ(ncu_metric_list(true).rfind("sm__throughput.avg.pct_of_peak_sustained_elapsed,", 0), 0u);
}

TEST(NcuCsv, NoRowsIsAnExplainedFailure) {
  ProfileResult result = parse_ncu_csv("==ERROR== The application returned an error code (1).\n");
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.error.empty());
}

TEST(Cupti, MissingLibraryOrDeviceIsAnExplanationNotACrash) {
  // Without a GPU (CI) this must fail politely; with one it must succeed or say why.
  int launches = 0;
  ProfileResult result = profile_with_cupti(
      0, {[&](const LaunchMarks& marks) {
        marks.before();
        ++launches;
      }},
      [] {}, kDefaultLimits.profiler_max_passes);
  if (!result.ok) EXPECT_FALSE(result.error.empty());
  if (result.ok) EXPECT_GE(launches, result.passes);
  if (!result.ok) EXPECT_FALSE(result.error.empty());
}

// The profiled kernel of these tests is the judge's own L2 flush (a read of twice the L2), so no
// compiler is needed.
class CuptiOnAGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0)
      GTEST_SKIP() << "no CUDA device here (" << cudaGetErrorName(status)
                   << "); this test runs on a machine with an NVIDIA GPU (scripts/gpu-check.sh)";
    gpu_ = std::make_unique<GpuSession>(0, default_cuda_include_dir());
    flush = [this] { gpu_->flush_l2(); };
    read_twice_the_l2 = {[this](const LaunchMarks& marks) {
      marks.before();
      gpu_->flush_l2();
    }};
  }
  std::unique_ptr<GpuSession> gpu_;
  std::function<void()> flush;
  std::vector<ProfiledLaunch> read_twice_the_l2;
  const int passes = kDefaultLimits.profiler_max_passes;
};

// A worker keeps CUPTI's host side between its jobs (the counter availability, read once, and each
// configuration's image). Kept, it must measure each later profile as a fresh one would, through a
// change of configuration, and start afresh after a failure.
TEST_F(CuptiOnAGpu, AKeptHostSideMeasuresEachLaterProfileAsAFreshOne) {
  auto profile = [&](bool sm_throughput) {
    return profile_with_cupti(0, read_twice_the_l2, flush, passes, {}, sm_throughput);
  };
  const ProfileResult first = profile(false);
  ASSERT_TRUE(first.ok) << first.error;
  const ProfileResult again = profile(false);
  const ProfileResult with_sm = profile(true);
  const ProfileResult back = profile(false);
  for (const ProfileResult* later : {&again, &with_sm, &back}) {
    ASSERT_TRUE(later->ok) << later->error;
    EXPECT_TRUE(later != &with_sm ? later->host_side_kept : !later->host_side_kept);  // its first
    ASSERT_EQ(later->kernels.size(), 1u);
    EXPECT_NEAR(later->kernels[0].duration_ms, first.kernels[0].duration_ms,
                0.3 * first.kernels[0].duration_ms);
    EXPECT_GT(later->kernels[0].dram_throughput_pct, 10.0);
  }
  EXPECT_FALSE(std::isnan(with_sm.kernels[0].sm_throughput_pct));
  EXPECT_TRUE(std::isnan(back.kernels[0].sm_throughput_pct));

  // A profile that fails (its launch ran no kernel, so no range was recorded) lets all of it go:
  // the next one reads the availability and makes its host side afresh, and measures.
  const ProfileResult failed = profile_with_cupti(0, {[](const LaunchMarks&) {}}, flush, passes, {}, false);
  EXPECT_FALSE(failed.ok);
  const ProfileResult after = profile(false);
  ASSERT_TRUE(after.ok) << after.error;
  EXPECT_FALSE(after.host_side_kept);
}

// The GPU's profiling process keeps the range profiler enabled between profiles: each later one
// must find it enabled, measure as the first did, and pay far less for its first pass; a failure
// disables it, and a profile not asked to keep it leaves it disabled.
TEST_F(CuptiOnAGpu, AProfilerKeptEnabledMeasuresEachLaterProfileAsTheFirst) {
  auto profile = [&](bool sm_throughput, bool keep) {
    return profile_with_cupti(0, read_twice_the_l2, flush, passes, {}, sm_throughput, keep);
  };
  const ProfileResult first = profile(false, true);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_FALSE(first.found_enabled);
  // An enabled profiler keeps its first configuration, so a profile asking for another (with SM
  // throughput, then without it again) enables it anew; the same one again finds it enabled.
  std::vector<ProfileResult> later = {profile(false, true), profile(true, true), profile(true, true),
                                      profile(false, true)};
  const bool found_enabled[] = {true, false, true, false};
  for (std::size_t k = 0; k < later.size(); ++k) {
    const ProfileResult& result = later[k];
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_EQ(result.found_enabled, found_enabled[k]) << "profile " << k + 2;
    ASSERT_EQ(result.kernels.size(), 1u);
    EXPECT_NEAR(result.kernels[0].duration_ms, first.kernels[0].duration_ms,
                0.3 * first.kernels[0].duration_ms);
    EXPECT_GT(result.kernels[0].dram_throughput_pct, 10.0);
    EXPECT_EQ(std::isnan(result.kernels[0].sm_throughput_pct), !result.sm_throughput) << "profile " << k + 2;
    std::printf(
        "profile %zu: %s, first pass %.1f ms (the first profile's: %.1f ms), enable %.1f ms, %d passes "
        "(starts %.1f, launches %.1f, stops %.1f ms)\n",
        k + 2, result.found_enabled ? "kept enabled" : "enabled now", result.first_pass_ms,
        first.first_pass_ms, result.enable_ms, result.passes, result.starts_ms, result.launches_ms,
        result.stops_ms);
  }
  EXPECT_TRUE(later[1].sm_throughput && later[2].sm_throughput && !later[3].sm_throughput);
  EXPECT_GT(later[1].passes, later[0].passes)
      << "SM throughput takes more passes on every GPU measured so far";
  EXPECT_EQ(later[3].passes, later[0].passes) << "the configuration without SM throughput was not set again";
  EXPECT_LT(later[0].first_pass_ms, first.first_pass_ms) << "keeping it enabled saved nothing";

  const ProfileResult failed =
      profile_with_cupti(0, {[](const LaunchMarks&) {}}, flush, passes, {}, false, true);
  EXPECT_FALSE(failed.ok);
  const ProfileResult after_failure = profile(false, false);
  ASSERT_TRUE(after_failure.ok) << after_failure.error;
  EXPECT_FALSE(after_failure.found_enabled) << "a failed profile left the profiler enabled";
  const ProfileResult after_unkept = profile(false, false);
  ASSERT_TRUE(after_unkept.ok) << after_unkept.error;
  EXPECT_FALSE(after_unkept.found_enabled) << "a profile not asked to keep the profiler kept it";
}

}  // namespace
}  // namespace cudojo

#include "measure/profiler.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/limits.h"

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

}  // namespace
}  // namespace cudojo

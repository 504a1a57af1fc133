#include "report/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace cudojo {
namespace {

Report sample_report() {
  Report report;
  report.verdict = Verdict::kWrongAnswer;
  report.stage = "reduction/3";
  report.file = "mine.cu";
  report.gpu = GpuInfo{"NVIDIA H200", "sm_90", 132, "13.0", "13.0", 4000.0};
  report.compile.ok = true;
  report.compile.arch = "sm_90";
  report.tests.push_back({"exact n=257", 257, "exact", 385, 3000385, false, "bitwise"});
  report.tests.push_back({"random_signed n=1", 1, "random_signed", 0.5, std::nan(""), false, "tolerance"});
  report.findings.push_back({"uninitialized_shared", "lanes past N returned early", 7});
  report.metrics.n = 4194304;
  report.metrics.time_ms = TimeStats{0.02, 0.019, 0.03, 20};
  report.metrics.reference_time_ms = TimeStats{0.01, 0.009, 0.011, 20};
  report.metrics.time_ratio = 2.0;
  report.gate = GateResult{"time_ms.median <= 2 x reference", 2.0, 2.0, true};
  report.output = {"hello\n", true, 999};
  report.message = "1 of 2 tests failed";
  report.barrier_check = {true, 1000, 2044, 320, ""};
  return report;
}

TEST(ReportJson, HasTheDocumentedKeys) {
  nlohmann::json j = sample_report();
  for (const char* key :
       {"verdict", "stage", "gpu", "compile", "tests", "findings", "metrics", "gate", "output"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["verdict"], "wrong_answer");
  EXPECT_EQ(j["compile"]["ok"], true);
  EXPECT_TRUE(j["compile"]["diagnostics"].is_array());
  for (const char* key : {"name", "n", "data", "expected", "got", "ok"})
    EXPECT_TRUE(j["tests"][0].contains(key));
  EXPECT_EQ(j["findings"][0]["code"], "uninitialized_shared");
  EXPECT_EQ(j["findings"][0]["line"], 7);
  EXPECT_DOUBLE_EQ(j["metrics"]["time_ms"]["median"].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(j["metrics"]["reference_time_ms"]["median"].get<double>(), 0.01);
  EXPECT_TRUE(j["metrics"].contains("bandwidth_gbps"));
  EXPECT_TRUE(j["metrics"].contains("pct_of_peak"));
  EXPECT_EQ(j["gate"]["passed"], true);
  EXPECT_EQ(j["output"]["truncated"], true);
  EXPECT_EQ(j["output"]["captured"], "hello\n");
}

TEST(ReportJson, NanSurvivesAsTextNotNull) {
  nlohmann::json j = sample_report();
  EXPECT_TRUE(j["tests"][1]["got"].is_string());
  Report back = j.get<Report>();
  EXPECT_TRUE(std::isnan(back.tests[1].got));
}

TEST(ReportJson, RoundTrips) {
  Report back = nlohmann::json(sample_report()).get<Report>();
  EXPECT_EQ(back.verdict, Verdict::kWrongAnswer);
  ASSERT_TRUE(back.gpu.has_value());
  EXPECT_EQ(back.gpu->sm_count, 132);
  EXPECT_EQ(back.tests.size(), 2u);
  EXPECT_EQ(back.findings[0].line, std::optional<int>(7));
  EXPECT_DOUBLE_EQ(*back.metrics.time_ratio, 2.0);
  EXPECT_EQ(back.output.bytes, 999u);
  EXPECT_TRUE(back.barrier_check.ran);
  EXPECT_EQ(back.barrier_check.n, 1000);
  EXPECT_EQ(back.barrier_check.arrivals, 2044u);
  EXPECT_EQ(back.barrier_check.collective_checks, 320u);
}

// Whatever values a kernel (or a measurement) makes, the report survives the trip through JSON text
// that the worker's result and the server's store take: every number field, each special value.
TEST(ReportJson, EveryNumberFieldSurvivesEverySpecialValue) {
  const double specials[] = {std::nan(""),
                             -std::nan(""),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             1e308,
                             -1e308,
                             std::numeric_limits<double>::denorm_min(),
                             -0.0,
                             static_cast<double>(std::numeric_limits<float>::max()) * 2};
  auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  for (const double value : specials) {
    Report report = sample_report();
    report.tests[0].expected = value;
    report.tests[0].got = value;
    report.determinism.push_back({"exact", 4194304, 5, 2, value, value});
    report.metrics.time_ms = TimeStats{value, value, value, 20};
    report.metrics.reference_time_ms = TimeStats{value, value, value, 20};
    report.metrics.time_ratio = value;
    report.metrics.bandwidth_gbps = value;
    report.metrics.pct_of_peak = value;
    report.metrics.kernel = KernelMetrics{value, value, value, value};
    report.metrics.reference_kernel = KernelMetrics{value, value, value, value};
    report.gate = GateResult{"time", value, value, false};
    report.sanitizer.tools.push_back({"racecheck", 0, value});
    report.calibration.previous_bandwidth_gbps = value;
    report.calibration.previous_sm_throughput_pct = value;
    report.compile.compile_ms = value;
    report.wall_ms = value;
    report.timings_ms["tests"] = value;

    const std::string text = nlohmann::json(report).dump();  // what travels between processes
    Report back;
    ASSERT_NO_THROW(back = nlohmann::json::parse(text).get<Report>()) << value << "\n" << text;
    EXPECT_TRUE(same(back.tests[0].expected, value)) << value;
    EXPECT_TRUE(same(back.tests[0].got, value)) << value;
    EXPECT_TRUE(same(back.determinism.at(0).min, value)) << value;
    EXPECT_TRUE(same(back.determinism.at(0).max, value)) << value;
    EXPECT_TRUE(same(back.metrics.time_ms->median_ms, value)) << value;
    EXPECT_TRUE(same(back.metrics.reference_time_ms->max_ms, value)) << value;
    EXPECT_TRUE(same(*back.metrics.time_ratio, value)) << value;
    EXPECT_TRUE(same(*back.metrics.bandwidth_gbps, value)) << value;
    EXPECT_TRUE(same(*back.metrics.pct_of_peak, value)) << value;
    EXPECT_TRUE(same(back.metrics.kernel->sm_throughput_pct, value)) << value;
    EXPECT_TRUE(same(back.metrics.reference_kernel->global_atomics, value)) << value;
    EXPECT_TRUE(same(*back.gate->value, value)) << value;
    EXPECT_TRUE(same(*back.gate->limit, value)) << value;
    EXPECT_TRUE(same(back.sanitizer.tools.at(0).seconds, value)) << value;
    EXPECT_TRUE(same(*back.calibration.previous_bandwidth_gbps, value)) << value;
    EXPECT_TRUE(same(back.compile.compile_ms, value)) << value;
    EXPECT_TRUE(same(back.wall_ms, value)) << value;
    EXPECT_TRUE(same(back.timings_ms.at("tests"), value)) << value;
    EXPECT_FALSE(render_text(report, false).empty());  // the text report prints them too
  }
}

TEST(ReportText, BarrierLineSaysWhetherEveryThreadArrived) {
  Report report = sample_report();
  EXPECT_NE(render_text(report, false)
                .find("every thread reached every barrier  (2044 arrivals counted at n=1000)"),
            std::string::npos);
  EXPECT_NE(render_text(report, false).find("every lane a mask named was there  (320 lane checks at n=1000)"),
            std::string::npos);
  report.findings.push_back({"divergent_barrier", "the __syncthreads() at line 13 ...", 13});
  EXPECT_NE(render_text(report, false).find("reached by part of a block"), std::string::npos);
  report.findings.push_back({"mask_names_gone_lanes", "The warp shuffle at line 10 ...", 10});
  EXPECT_NE(render_text(report, false).find("a mask named lanes that had left"), std::string::npos);
  report.barrier_check = {false, 0, 0, 0, "the counted build did not compile"};
  EXPECT_NE(render_text(report, false).find("not checked: the counted build did not compile"),
            std::string::npos);
}

TEST(ReportText, ShowsVerdictFindingsAndFailedTests) {
  std::string text = render_text(sample_report(), false);
  EXPECT_NE(text.find("WRONG_ANSWER"), std::string::npos);
  EXPECT_NE(text.find("uninitialized_shared (line 7)"), std::string::npos);
  EXPECT_NE(text.find("exact n=257"), std::string::npos);
  EXPECT_NE(text.find("1 of 2 tests failed"), std::string::npos);
  EXPECT_EQ(text.find("\x1b["), std::string::npos);  // no colour when asked for none
}

TEST(ReportText, ColourOnlyWhenAsked) {
  EXPECT_NE(render_text(sample_report(), true).find("\x1b[31m"), std::string::npos);
}

TEST(ReportText, NoColorIsHonoured) {
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(colour_wanted(1));
  unsetenv("NO_COLOR");
}

}  // namespace
}  // namespace cudojo

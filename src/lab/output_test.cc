#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lab/lab.h"

namespace cudojo::lab {
namespace {

Result sample(bool failing) {
  Result result{"sum-strategies", "two strategies", {}, {}, {}};
  Table table{"sums", {"n", "strategy", "median ms"}, {}, {"a note"}};
  table.rows.push_back({4096, "cub", 0.0123});
  table.rows.push_back({4096, "tree, atomic", nullptr});
  result.tables.push_back(table);
  if (failing) result.failures.push_back("tree_atomic at n = 2^12: got 3, expected 4");
  return result;
}

TEST(LabOutput, TextShowsTablesNotesAndFailures) {
  const std::string text = render_text(sample(true));
  EXPECT_NE(text.find("sum-strategies"), std::string::npos);
  EXPECT_NE(text.find("0.0123"), std::string::npos);
  EXPECT_NE(text.find("a note"), std::string::npos);
  EXPECT_NE(text.find("FAILED CHECKS (1)"), std::string::npos);
  EXPECT_NE(text.find("got 3, expected 4"), std::string::npos);
}

TEST(LabOutput, AFailedCheckMakesTheExitCodeNonZero) {
  EXPECT_EQ(exit_code({sample(false)}), 0);
  EXPECT_EQ(exit_code({sample(false), sample(true)}), 1);
}

TEST(LabOutput, CsvQuotesFieldsWithCommas) {
  const std::string csv = render_csv({sample(false)});
  EXPECT_NE(csv.find("experiment,table,n,strategy,median ms\n"), std::string::npos);
  EXPECT_NE(csv.find("\"tree, atomic\""), std::string::npos);
}

TEST(LabOutput, JsonRowsAreKeyedByColumn) {
  nlohmann::json j = sample(true);
  EXPECT_EQ(j["tables"][0]["rows"][0]["strategy"], "cub");
  EXPECT_TRUE(j["tables"][0]["rows"][1]["median ms"].is_null());
  EXPECT_EQ(j["failures"].size(), 1u);
}

TEST(LabOutput, SvgHasOneLinePerSeriesAndEscapesText) {
  Plot plot{"a <b> & c",
            "n",
            "GB/s",
            true,
            {{"cub", {{4096, 10}, {16384, 40}}}, {"tree", {{4096, 5}, {16384, 20}}}}};
  const std::string svg = render_svg(plot);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1))
    ++lines;
  EXPECT_EQ(lines, 2u);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; c"), std::string::npos);
  EXPECT_NE(svg.find("2^12"), std::string::npos);
}

TEST(LabOutput, EveryExperimentIsListed) {
  for (const char* name : {"race", "contention", "sum-strategies", "determinism", "precision", "float-max"}) {
    EXPECT_NE(find_experiment(name), nullptr) << name;
  }
  EXPECT_EQ(find_experiment("nope"), nullptr);
}

}  // namespace
}  // namespace cudojo::lab

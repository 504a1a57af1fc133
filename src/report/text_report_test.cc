// The compiler's part of the text report: every diagnostic with its severity, file:line:column and
// the compiler's excerpt under it, also for a compile that passed with warnings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace cudojo {
namespace {

Diagnostic diagnostic(std::string file, int line, int column, std::string severity, std::string message,
                      std::string context) {
  Diagnostic d;
  d.file = std::move(file);
  d.line = line;
  d.column = column;
  d.severity = std::move(severity);
  d.message = std::move(message);
  d.context = std::move(context);
  return d;
}

TEST(TextReport, ADiagnosticShowsItsColumnAndTheCompilersExcerpt) {
  Report report;
  report.verdict = Verdict::kCompileError;
  report.file = "mine.cu";
  report.compile.ok = false;
  report.compile.nvrtc = "13.0";
  report.compile.diagnostics = {
      diagnostic("mine.cu", 4, 31, "error", "identifier \"j\" is undefined",
                 "if (i < N) atomicAdd(out, X[j]);\n                             ^"),
      diagnostic("cub/block/block_reduce.cuh", 518, 10, "error", "no operator +", ""),
      diagnostic("mine.cu", 7, 0, "note", "the error in <cub/block/block_reduce.cuh> comes from this line",
                 "")};
  const std::string text = render_text(report, false);
  EXPECT_NE(text.find("error mine.cu:4:31: identifier \"j\" is undefined\n"
                      "        | if (i < N) atomicAdd(out, X[j]);\n"
                      "        |                              ^\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("error cub/block/block_reduce.cuh:518:10: no operator +"), std::string::npos) << text;
  EXPECT_NE(text.find("note mine.cu:7: the error in"), std::string::npos) << text;
}

TEST(TextReport, AnAcceptedKernelStillListsItsWarnings) {
  Report report;
  report.verdict = Verdict::kAccepted;
  report.file = "mine.cu";
  report.compile.ok = true;
  report.compile.nvrtc = "13.0";
  report.compile.diagnostics = {diagnostic("mine.cu", 2, 7, "warning",
                                           "variable \"unused\" was declared but never referenced",
                                           "int unused;\n    ^")};
  const std::string plain = render_text(report, false);
  EXPECT_NE(plain.find("warning mine.cu:2:7: variable \"unused\" was declared but never referenced"),
            std::string::npos)
      << plain;
  // In colour a warning is yellow, not red.
  const std::string coloured = render_text(report, true);
  EXPECT_NE(coloured.find("\x1b[33mwarning\x1b[0m"), std::string::npos);
}

TEST(TextReport, HotSpotsShowTheHottestLinesWithTheirStallInWords) {
  Report report;
  report.verdict = Verdict::kTooSlow;
  report.file = "mine.cu";
  report.compile.ok = true;
  HotSpots hot;
  hot.lines = {{7, "atomicAdd(out, X[i]);", 700, 0.75, 131072, "drain", 0.7},
               {5, "int i = blockIdx.x * blockDim.x + threadIdx.x;", 230, 0.2495, 524288, "short_sb", 0.98},
               {9, "}", 1, 0.0005, 0, "branch_resolving", 1.0}};
  hot.samples = 931;
  hot.drain_samples = 488;
  report.hot_spots = hot;
  const std::string text = render_text(report, false);
  EXPECT_NE(text.find("75.0%  line 7    atomicAdd(out, X[i]);"), std::string::npos) << text;
  EXPECT_NE(text.find("70% finished, waiting for its writes to land (drain)"), std::string::npos) << text;
  EXPECT_NE(text.find("(short scoreboard)"), std::string::npos) << text;
  EXPECT_EQ(text.find("line 9 "), std::string::npos) << "a line with almost no samples is noise:\n" << text;
  EXPECT_NE(text.find("counted on the lines that write"), std::string::npos) << text;

  Report json_round_trip = nlohmann::json(report).get<Report>();
  ASSERT_TRUE(json_round_trip.hot_spots);
  EXPECT_EQ(json_round_trip.hot_spots->lines.size(), 3u);
  EXPECT_EQ(json_round_trip.hot_spots->lines[0].stall, "drain");
  EXPECT_EQ(json_round_trip.hot_spots->drain_samples, 488);
}

}  // namespace
}  // namespace cudojo

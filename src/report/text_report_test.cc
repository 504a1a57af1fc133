// The compiler's part of the text report: every diagnostic with its severity, file:line:column and
// the compiler's excerpt under it, also for a compile that passed with warnings.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cudojo

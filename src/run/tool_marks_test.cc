#include "run/tool_marks.h"

#include <gtest/gtest.h>

#include <set>

namespace cudojo {
namespace {

const std::string kLearnersRace =
    "========= Error: Race reported between Write access at reduce+0x10 in mine.cu:11\n"
    "=========     and Read access at reduce+0x20 in mine.cu:12 [32 hazards]\n"
    "========= \n";

TEST(ToolMarks, AMemcheckLogIsCutAtTheReportOfTheFailedCall) {
  const std::string mark =
      "========= Program hit cudaErrorInvalidDeviceFunction (error 98) due to \"invalid device function\" "
      "on CUDA API call to cudaFuncGetAttributes.\n=========     Saved host backtrace up to driver entry "
      "point\n";
  const std::string mark_text = new_tool_mark("memcheck");
  EXPECT_EQ(mark_text, kFailedCallMark);
  EXPECT_EQ(find_tool_log_mark(kLearnersRace + mark, mark_text).value(), kLearnersRace.size());
  EXPECT_FALSE(find_tool_log_mark(kLearnersRace, mark_text).has_value());
  // The call's name alone, in a frame, is not the mark.
  EXPECT_FALSE(
      find_tool_log_mark("=========     Host Frame: on CUDA API call to cudaFuncGetAttributes\n", mark_text));
  EXPECT_EQ(find_tool_log_mark(mark + kLearnersRace + mark, mark_text).value(), 0u);
}

TEST(ToolMarks, ARacecheckLogIsCutAtTheHazardReportOfItsOwnMarkKernel) {
  const std::string mark = new_tool_mark("racecheck");
  ASSERT_EQ(mark.rfind("cudojo_tool_mark_", 0), 0u);
  // As the H200 printed it (evidence/2026-12-02-h200-sanitizer-marks.txt), for a kernel of that name.
  const std::string report = "========= Error: Race reported between Write access at " + mark +
                             "+0x60\n=========     and Write access at " + mark +
                             "+0x60 [63 hazards]\n========= \n";
  EXPECT_EQ(find_tool_log_mark(kLearnersRace + report, mark).value(), kLearnersRace.size());
  // The second line of the report names it too, but the cut is at the report's first line.
  EXPECT_EQ(find_tool_log_mark(report, mark).value(), 0u);
  // Another worker's mark, or the learner's lines, are not this worker's.
  EXPECT_FALSE(find_tool_log_mark(kLearnersRace + report, new_tool_mark("racecheck")).has_value());
  EXPECT_FALSE(find_tool_log_mark("printed by the kernel: " + mark + "\n", mark).has_value());
}

TEST(ToolMarks, EveryRacecheckWorkerGetsAMarkOfItsOwn) {
  std::set<std::string> marks;
  for (int i = 0; i < 100; ++i) marks.insert(new_tool_mark("racecheck"));
  EXPECT_EQ(marks.size(), 100u);
  for (const auto& mark : marks) EXPECT_EQ(mark.size(), std::string("cudojo_tool_mark_").size() + 16) << mark;
}

TEST(ToolMarks, SynccheckNeedsNoMarkAndFindsNone) {
  EXPECT_TRUE(new_tool_mark("synccheck").empty());
  EXPECT_FALSE(find_tool_log_mark(kLearnersRace, "").has_value());
}

TEST(ToolMarks, AReportIsAnyToolLineButTheBannerAndBlankOnes) {
  EXPECT_FALSE(tool_log_has_report(""));
  EXPECT_FALSE(tool_log_has_report("========= COMPUTE-SANITIZER\n========= \n"));
  EXPECT_FALSE(tool_log_has_report("a line the kernel printed\n"));
  EXPECT_TRUE(tool_log_has_report("========= Barrier error detected. Invalid arguments.\n"));
  EXPECT_TRUE(tool_log_has_report(kLearnersRace));
  EXPECT_TRUE(tool_log_has_report("========= ERROR SUMMARY: 1 error"));  // no final newline
}

TEST(ToolMarks, ALogReadWholeLosesTheMarksReportsAndKeepsTheLearners) {
  const std::string mark = new_tool_mark("racecheck");
  const std::string report = "========= Error: Race reported between Write access at " + mark +
                             "+0x60\n=========     and Write access at " + mark +
                             "+0x60 [63 hazards]\n========= \n";
  const std::string log = "========= COMPUTE-SANITIZER\n" + kLearnersRace + report + kLearnersRace + report +
                          "========= RACECHECK SUMMARY: 4 hazards displayed (4 errors, 0 warnings)\n";
  const std::string kept = without_tool_mark_reports(log, mark);
  EXPECT_EQ(kept, "========= COMPUTE-SANITIZER\n" + kLearnersRace + kLearnersRace +
                      "========= RACECHECK SUMMARY: 4 hazards displayed (4 errors, 0 warnings)\n");
  EXPECT_EQ(without_tool_mark_reports(log, ""), log);
}

}  // namespace
}  // namespace cudojo

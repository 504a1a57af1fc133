#include "compile/ptx_lines.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TEST(PtxLines, InlinedCodeIsAtTheLearnersCallThroughEveryLevel) {
  // As NVRTC writes cooperative groups' block.sync() called at line 12: CUDA's header (file 2)
  // inlined into the learner's file (1), then a helper (file 3) inlined into the header.
  PtxLineTracker lines(1);
  lines.see(".visible .entry reduce(");
  lines.see("\t.loc\t1 11 5");
  EXPECT_EQ(lines.current(), 11u);
  lines.see("\t.loc\t2 489 9, function_name $L__info_string4, inlined_at 1 12 5");
  EXPECT_EQ(lines.current(), 12u);
  lines.see("\t.loc\t3 87 13, function_name $L__info_string5, inlined_at 2 489 9");
  EXPECT_EQ(lines.current(), 12u);
  // The same header line inlined again, elsewhere: the newest chain wins.
  lines.see("\t.loc\t2 489 9, function_name $L__info_string4, inlined_at 1 16 13");
  lines.see("\t.loc\t3 87 13, function_name $L__info_string5, inlined_at 2 489 9");
  EXPECT_EQ(lines.current(), 16u);
  // Another file's code reached by no chain is nobody's line.
  lines.see("\t.loc\t3 12 1");
  EXPECT_EQ(lines.current(), 0u);
  // A new function forgets the old chains.
  lines.see("\t.loc\t2 489 9, function_name $L__info_string4, inlined_at 1 30 1");
  lines.see(".visible .func helper(");
  lines.see("\t.loc\t3 87 13, function_name $L__info_string5, inlined_at 2 489 9");
  EXPECT_EQ(lines.current(), 0u);
}

TEST(PtxLines, ForgedNumbersCannotCrashIt) {
  PtxLineTracker lines(1);
  lines.see("\t.loc 1 99999999999999999999 1");
  EXPECT_EQ(lines.current(), static_cast<unsigned>(INT_MAX));
  lines.see("\t.loc 2 1 1, inlined_at 99999999999999999999 5 5");
  EXPECT_EQ(lines.current(), 0u);
}

TEST(PtxLines, TheLearnersFileIsTheOneNamedLikeIt) {
  const std::string ptx =
      "\t.file\t1 \"/usr/local/cuda/include/mine.cu\"\n"
      "\t.file\t2 \"/usr/local/cuda/include/cooperative_groups.h\"\n"
      "\t.file\t3 \"/tmp/job/mine.cu\"\n";
  EXPECT_EQ(ptx_learner_file_index(ptx, "mine.cu"), 3);
  EXPECT_EQ(ptx_learner_file_index(ptx, "ine.cu"), 1);  // only whole names match; none: 1
  EXPECT_EQ(ptx_learner_file_index("\t.file\t4 \"mine.cu\"\n", "mine.cu"), 4);
}

}  // namespace
}  // namespace cudojo

// The parser runs on compute-sanitizer logs captured on an H200 by
// scripts/capture-sanitizer-fixtures.sh (tests/fixtures/sanitizer/).
#include "check/sanitizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace cudojo {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(CUDOJO_FIXTURES_DIR) + "/sanitizer/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SanitizerLog, MissingBarrierIsASharedRaceAtTheFoldLine) {
  auto errors =
      parse_sanitizer_log("racecheck", fixture("racecheck-missing_barrier.cu.txt"), "missing_barrier.cu");
  EXPECT_GT(errors.errors, 0);
  ASSERT_FALSE(errors.findings.empty());
  EXPECT_EQ(errors.findings[0].code, "shared_race");
  EXPECT_EQ(errors.findings[0].line, std::optional<int>(11));
  EXPECT_NE(errors.findings[0].message.find("__syncthreads()"), std::string::npos);
}

TEST(SanitizerLog, UnguardedLoadIsOutOfBoundsAtItsLine) {
  auto errors =
      parse_sanitizer_log("memcheck", fixture("memcheck-unguarded_load.cu.txt"), "unguarded_load.cu");
  EXPECT_GT(errors.errors, 0);
  ASSERT_FALSE(errors.findings.empty());
  EXPECT_EQ(errors.findings[0].code, "out_of_bounds");
  EXPECT_EQ(errors.findings[0].line, std::optional<int>(5));
}

TEST(SanitizerLog, CleanLogsGiveNothing) {
  for (const char* tool : {"racecheck", "memcheck"}) {
    auto errors = parse_sanitizer_log(tool, fixture(std::string(tool) + "-reference.cu.txt"), "reference.cu");
    EXPECT_EQ(errors.errors, 0) << tool;
    EXPECT_TRUE(errors.findings.empty()) << tool;
  }
}

// Synthetic logs below (the H200 never produced these): the parser's rules at their edges.
TEST(SanitizerLog, BarrierErrorsBecomeDivergentBarrierFindings) {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Barrier error detected. Divergent thread(s) in block\n"
      "=========     at reduce(const float *, float *, int)+0x2a0 in mine.cu:12\n"
      "=========     by thread (16,0,0) in block (0,0,0)\n"
      "========= \n";
  auto errors = parse_sanitizer_log("synccheck", log, "mine.cu");
  EXPECT_EQ(errors.errors, 1);
  ASSERT_EQ(errors.findings.size(), 1u);
  EXPECT_EQ(errors.findings[0].code, "divergent_barrier");
  EXPECT_EQ(errors.findings[0].line, std::optional<int>(12));
}

TEST(SanitizerLog, FramesInOtherFilesDoNotNameALine) {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Race reported between Write access at reduce+0x10 in /usr/include/x.h:3\n"
      "=========     and Read access at reduce+0x20 in /usr/include/x.h:4 [2 hazards]\n";
  auto errors = parse_sanitizer_log("racecheck", log, "mine.cu");
  EXPECT_EQ(errors.errors, 1);
  ASSERT_EQ(errors.findings.size(), 1u);
  EXPECT_FALSE(errors.findings[0].line.has_value());
}

}  // namespace
}  // namespace cudojo

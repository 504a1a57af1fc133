// Nsight Compute's source page read into hot spots, without a GPU: the page's layout as ncu 2025.3
// prints it (--page source --csv --print-source cuda,sass; see
// evidence/2026-12-03-h200-machine-view-tools.txt), trimmed to the columns read here.
#include "run/hot_spots.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace cudojo {
namespace {

constexpr const char* kHeader =
    "\"Line No\",\"Source\",\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\","
    "\"Warp Stall Sampling (Not-issued Samples)\",\"# Samples\",\"Instructions Executed\",\"stall_drain\","
    "\"stall_long_sb\",\"stall_selected\",\"stall_long_sb (Not Issued)\"\n";

// The contended atomic of reduction/3's starter: line 10's warps wait on their load, then finish
// and wait for their reduction to land, which ncu puts on the code after the exit (line 11).
const std::string kContendedAtomic =
    std::string(
        "\"File Path\",\"/tmp/job/starter.cu\"\n\"Function Name\",\"reduce(const float *, float *, "
        "int)\"\n") +
    kHeader +
    "\"9\",\"int i = blockIdx.x * blockDim.x + "
    "threadIdx.x;\",\"-\",\"-\",\"230\",\"229\",\"230\",\"524288\",\"0\","
    "\"0\",\"230\",\"0\"\n"
    "\"\",\"\",\"0x7fd4517a0040\",\"      IMAD R5, R5, UR4, "
    "R0\",\"226\",\"226\",\"226\",\"131072\",\"0\",\"0\","
    "\"226\",\"0\"\n"
    "\"10\",\"if (i < N) atomicAdd(out, "
    "X[i]);\",\"-\",\"-\",\"211\",\"211\",\"211\",\"1179648\",\"0\",\"208\","
    "\"3\",\"208\"\n"
    "\"\",\"\",\"0x7fd4517a00b0\",\"      LDG.E R3, "
    "desc[UR4][R2.64]\",\"1\",\"1\",\"1\",\"131072\",\"0\",\"0\","
    "\"1\",\"0\"\n"
    "\"\",\"\",\"0x7fd4517a00d0\",\"      REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R4.64], R3\",\"210\","
    "\"210\",\"210\",\"131072\",\"0\",\"208\",\"2\",\"208\"\n"
    "\"\",\"\",\"...\",\"...\",\"-\",\"-\",\"-\",\"-\",\"-\",\"-\",\"-\",\"-\"\n"
    "\"\",\"\",\"0x7fd4517a00d0\",\"      REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R4.64], R3\",\"210\","
    "\"210\",\"210\",\"131072\",\"0\",\"208\",\"2\",\"208\"\n"
    "\"11\",\"}\",\"-\",\"-\",\"487\",\"487\",\"487\",\"131072\",\"487\",\"0\",\"0\",\"0\"\n"
    "\"\",\"\",\"0x7fd4517a00f0\",\"      BRA "
    "0x7fd4517a00f0\",\"487\",\"487\",\"487\",\"0\",\"487\",\"0\",\"0\","
    "\"0\"\n"
    // The same reduction, as CUDA's header holds it: not the learner's line.
    "\"File Path\",\"/usr/local/cuda/targets/x86_64-linux/include/sm_20_atomic_functions.hpp\"\n"
    "\"Function Name\",\"reduce(const float *, float *, int)\"\n" +
    kHeader +
    "\"84\",\"return __fAtomicAdd(address, val);\",\"-\",\"-\",\"210\",\"210\",\"210\",\"262144\",\"0\","
    "\"208\",\"2\",\"208\"\n";

const char* kSource =
    "// reduction/3's starter, shortened\n"
    "\n\n\n\n\n\n"
    "__global__ void reduce(const float* X, float* out, int N) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < N) atomicAdd(out, X[i]);\n"
    "}\n";

TEST(HotSpots, TheContendedAtomicIsTheHottestLineOnceDrainingWarpsCountAgainstIt) {
  const HotSpots hot = hot_spots_from_source_page(kContendedAtomic, "starter.cu", kSource);
  ASSERT_EQ(hot.lines.size(), 2u) << "the closing brace keeps no samples once its drain is moved";
  EXPECT_EQ(hot.lines[0].line, 10u);
  EXPECT_EQ(hot.lines[0].text, "if (i < N) atomicAdd(out, X[i]);");
  EXPECT_EQ(hot.lines[0].samples, 211 + 487);
  EXPECT_EQ(hot.lines[0].stall, "drain");
  EXPECT_NEAR(hot.lines[0].stall_share, 487.0 / 698.0, 1e-9);
  EXPECT_EQ(hot.lines[0].instructions, 1179648);
  EXPECT_EQ(hot.lines[1].line, 9u);
  EXPECT_EQ(hot.lines[1].stall, "selected");
  EXPECT_EQ(hot.samples, 230 + 211 + 487);
  EXPECT_EQ(hot.drain_samples, 487);
  EXPECT_NEAR(hot.lines[0].share + hot.lines[1].share, 1.0, 1e-9);
  EXPECT_TRUE(hot.note.empty()) << hot.note;
}

TEST(HotSpots, WithoutWritesDrainStaysWhereNcuPutIt) {
  std::string page = kContendedAtomic;
  for (auto at = page.find("REDG"); at != std::string::npos; at = page.find("REDG", at))
    page.replace(at, 4, "FADD");
  const HotSpots hot = hot_spots_from_source_page(page, "starter.cu", kSource);
  ASSERT_EQ(hot.lines.size(), 3u);
  EXPECT_EQ(hot.lines[0].line, 11u);
  EXPECT_EQ(hot.drain_samples, 0);
}

TEST(HotSpots, ALineOfSourceHoldingQuotesAndCommasIsReadWhole) {
  std::string page = kContendedAtomic;
  const std::string plain = "\"9\",\"int i = blockIdx.x * blockDim.x + threadIdx.x;\"";
  page.replace(page.find(plain), plain.size(), "\"9\",\"printf(\"a\",\"b\"); int i = 0;\"");
  const HotSpots hot = hot_spots_from_source_page(page, "starter.cu", kSource);
  ASSERT_EQ(hot.lines.size(), 2u);
  EXPECT_EQ(hot.lines[1].line, 9u);
  EXPECT_EQ(hot.lines[1].samples, 230);
}

TEST(HotSpots, AnotherFilesLinesAreNotTheLearnersAndAPageWithoutRowsSaysSo) {
  const HotSpots other = hot_spots_from_source_page(kContendedAtomic, "mine.cu", kSource);
  EXPECT_TRUE(other.lines.empty());
  EXPECT_NE(other.note.find("mine.cu"), std::string::npos) << other.note;
  const HotSpots empty = hot_spots_from_source_page("==ERROR== no such report\n", "starter.cu", kSource);
  EXPECT_TRUE(empty.lines.empty());
  EXPECT_FALSE(empty.note.empty());
}

// ncu 2025.3's own page for reduction/3's starter on an H200 (--set full), from
// scripts/machine-view-check.sh: the warps' time is on the atomicAdd, most of it draining.
TEST(HotSpots, NcusOwnPageOfReduction3sStarterPointsAtItsAtomicAdd) {
  std::ifstream page_file(std::string(CUDOJO_FIXTURES_DIR) + "/ncu/reduction3-starter-source-page.csv");
  const std::string page{std::istreambuf_iterator<char>(page_file), std::istreambuf_iterator<char>()};
  std::ifstream starter_file(std::string(CUDOJO_COURSE_DIR) + "/reduction/03-block-tree/starter.cu");
  const std::string starter{std::istreambuf_iterator<char>(starter_file), std::istreambuf_iterator<char>()};
  ASSERT_FALSE(page.empty());
  const HotSpots hot = hot_spots_from_source_page(page, "starter.cu", starter);
  ASSERT_GE(hot.lines.size(), 2u) << hot.note;
  EXPECT_EQ(hot.lines[0].line, 7u);
  EXPECT_NE(hot.lines[0].text.find("atomicAdd"), std::string::npos) << hot.lines[0].text;
  EXPECT_EQ(hot.lines[0].stall, "drain");
  EXPECT_GT(hot.lines[0].share, 0.5);
  EXPECT_GT(hot.drain_samples, 0);
  double shares = 0;
  for (const HotLine& line : hot.lines) {
    EXPECT_LE(line.stall_share, 1.0) << line.line << " " << line.stall;
    EXPECT_EQ(line.stall.find("Not Issued"), std::string::npos) << line.stall;
    shares += line.share;
  }
  EXPECT_NEAR(shares, 1.0, 1e-9);
}

}  // namespace
}  // namespace cudojo

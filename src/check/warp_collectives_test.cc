#include "check/warp_collectives.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TEST(WarpCollectives, LanesAreDescribedAsRuns) {
  EXPECT_EQ(describe_lanes(0), "no lanes");
  EXPECT_EQ(describe_lanes(1u << 31), "lane 31");
  EXPECT_EQ(describe_lanes(0xFFFFFF00u), "lanes 8-31");
  EXPECT_EQ(describe_lanes((1u << 3) | (1u << 5) | (7u << 9)), "lanes 3, 5 and 9-11");
}

TEST(WarpCollectives, NoSightingNoFinding) {
  WarpMaskCounts counts;
  counts.checked = 4096;
  counts.sightings_per_line.assign(64, 0);
  EXPECT_FALSE(gone_lanes_finding(counts, true).has_value());
}

TEST(WarpCollectives, ASightingNamesTheLineTheCollectiveAndTheGoneLanes) {
  WarpMaskCounts counts;
  counts.sightings_per_line.assign(64, 0);
  counts.sightings_per_line[12] = 40;
  counts.first = WarpMaskSighting{12, 31, 7, 0xFFFFFF00u, "warp shuffle"};
  const auto finding = gone_lanes_finding(counts, true);
  ASSERT_TRUE(finding.has_value());
  EXPECT_EQ(finding->code, "mask_names_gone_lanes");
  EXPECT_EQ(finding->line, 12);
  EXPECT_NE(finding->message.find("The warp shuffle at line 12"), std::string::npos) << finding->message;
  EXPECT_NE(finding->message.find("block 31, warp 7: lanes 8-31"), std::string::npos) << finding->message;
}

TEST(WarpCollectives, AShuffleThatReadAGoneLaneCountsOnlyWhenTheAnswerDependsOnIt) {
  WarpMaskCounts counts;
  counts.sightings_per_line.assign(64, 0);
  counts.first_gone_read = WarpMaskSighting{9, 2, 0, 1u << 20, "warp shuffle"};
  EXPECT_FALSE(gone_lanes_finding(counts, true).has_value());          // the value was dropped
  EXPECT_FALSE(gone_lanes_finding(counts, std::nullopt).has_value());  // nobody could tell
  const auto finding = gone_lanes_finding(counts, false);
  ASSERT_TRUE(finding.has_value());
  EXPECT_EQ(finding->code, "shuffle_reads_gone_lane");
  EXPECT_EQ(finding->line, 9);
  EXPECT_NE(finding->message.find("block 2, warp 0: lane 20"), std::string::npos) << finding->message;
  EXPECT_NE(finding->message.find("__activemask()"), std::string::npos);
}

TEST(WarpCollectives, ASightingOutsideTheLearnersLinesStillCounts) {
  WarpMaskCounts counts;
  counts.sightings_per_line.assign(64, 0);
  counts.sightings_per_line[0] = 3;
  const auto finding = gone_lanes_finding(counts, true);
  ASSERT_TRUE(finding.has_value());
  EXPECT_FALSE(finding->line.has_value());
}

}  // namespace
}  // namespace cudojo

// Judges what the check build's warp counters saw (compile/ptx_warp_collectives.h): a warp
// collective whose mask named a lane that had already left the kernel, or a shuffle that read
// from such a lane. The collective then waits
// only for the lanes still there, and what they read from the gone lane is undefined, so a right
// sum proves nothing; the finding names the line whatever the sum.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"

namespace cudojo {

namespace finding_code {
inline constexpr std::string_view kMaskNamesGoneLanes = "mask_names_gone_lanes";
inline constexpr std::string_view kShuffleReadsGoneLane = "shuffle_reads_gone_lane";
}  // namespace finding_code

// The first sighting, as the counters recorded it.
struct WarpMaskSighting {
  unsigned line = 0;  // the learner's line; 0 when not known
  std::uint32_t block = 0;
  std::uint32_t warp = 0;        // the warp in its block
  std::uint32_t gone_lanes = 0;  // the lanes named by the mask that had left, one bit each
  std::string collective;        // "warp shuffle", "__syncwarp", ... as the learner would call it
};

struct WarpMaskCounts {
  std::uint64_t checked = 0;                      // lane-executions of a collective that were checked
  std::vector<std::uint32_t> sightings_per_line;  // index = line; [0] = lines past the table
  std::optional<WarpMaskSighting> first;
  // The first shuffle that read a gone lane (gone_lanes: that lane), whatever its mask.
  std::optional<WarpMaskSighting> first_gone_read;
};

// `answer_right`: whether the check build's launch answered right, with every value read from a
// gone lane replaced by a loud one; nullopt when the contract cannot tell. A read of a gone lane
// counts only when the answer then came out wrong: a kernel that drops such values is right.
std::optional<Finding> gone_lanes_finding(const WarpMaskCounts& counts, std::optional<bool> answer_right);

// "lanes 8-31", "lanes 3, 5 and 9-11", "lane 31".
std::string describe_lanes(std::uint32_t lanes);

}  // namespace cudojo

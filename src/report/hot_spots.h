// Where a kernel's time goes, line by line of the learner's source (issue #28): Nsight Compute's
// warp-state samples of the timed launch at the performance size, summed per source line, each
// line with the stall reason most of its samples give. Asked for per check (`--hot-spots`, or a
// job's "profile"), only for a kernel that passed the tests; run/hot_spots.h collects them.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

struct HotLine {
  unsigned line = 0;              // in the learner's file
  std::string text;               // the line as written, trimmed (for the report)
  std::int64_t samples = 0;       // warp-state samples charged to the line
  double share = 0;               // of all the kernel's samples
  std::int64_t instructions = 0;  // warp-level instructions executed on the line
  std::string stall;              // the reason most of the line's samples give (ncu's name)
  double stall_share = 0;         // of the line's samples
};

struct HotSpots {
  std::vector<HotLine> lines;  // every line with samples, hottest first
  std::int64_t samples = 0;    // all the learner's kernels' samples
  // Samples of warps that had exited and waited for their writes to land (ncu's "drain"), charged
  // to the lines that write global memory, in proportion to the writes each executed.
  std::int64_t drain_samples = 0;
  std::string note;  // why there are none, or what to know about them
  double ms = 0;     // what collecting them cost
};

// The stall reason in the lesson's words: "long_scoreboard" -> "waiting for global memory (long
// scoreboard)". An unknown name is returned as it is.
std::string describe_stall(std::string_view stall);

void to_json(nlohmann::json& j, const HotLine& line);
void from_json(const nlohmann::json& j, HotLine& line);
void to_json(nlohmann::json& j, const HotSpots& hot_spots);
void from_json(const nlohmann::json& j, HotSpots& hot_spots);

}  // namespace cudojo

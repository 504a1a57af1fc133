// compute-sanitizer's reports, read as findings. Tests can be right by luck (a fold with a missing
// barrier often sums correctly); the sanitizers see the hazard itself:
//   racecheck  -> shared_race        two threads touched one shared slot with no barrier between
//   synccheck  -> divergent_barrier  a __syncthreads() that part of the block never reached
//   memcheck   -> out_of_bounds      a load or store outside any allocation
// Pure text processing: tested on captured outputs (tests/fixtures/sanitizer/).
#pragma once

#include <string>
#include <vector>

#include "check/outcome.h"

namespace cudojo {

namespace finding_code {
inline constexpr std::string_view kSharedRace = "shared_race";
inline constexpr std::string_view kDivergentBarrier = "divergent_barrier";
}  // namespace finding_code

// The tools run, in order, and the finding each one's errors become.
inline constexpr const char* kSanitizerTools[] = {"racecheck", "synccheck", "memcheck"};

struct SanitizerErrors {
  int errors = 0;                 // error reports found in the log
  std::vector<Finding> findings;  // at most one per distinct line
};

// Reads one tool's log. `file_name` is the learner's file as NVRTC named it; the first frame in
// that file gives the finding its line.
SanitizerErrors parse_sanitizer_log(const std::string& tool, const std::string& log,
                                    const std::string& file_name);

}  // namespace cudojo

// The warp half of the check build (compile/check_build.h). A `*_sync` collective waits for every
// lane its mask names that has not exited, so a lane that left (an early `return` for i >= N) lets
// the others through, and what they read from it is undefined: the sum can come out right on one
// GPU and wrong on the next. The course's rule is that every lane the mask names executes the
// collective. So before a thread leaves the kernel (`ret` in an entry, `exit` anywhere) it sets its
// lane's bit in its warp's word, and after each collective every lane that ran it reads that word:
// a gone lane in the mask counts one sighting at the collective's learner line, and the first
// sighting records where (block, warp, lanes) and which kind of collective it was.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudojo {

// What kind of collective a sighting was, as the finding names it.
// kShuffleSource: a shuffle that read from a gone lane (its mask may name only lanes present).
enum class WarpCollectiveKind : unsigned {
  kShuffle,
  kVote,
  kMatch,
  kReduce,
  kSyncwarp,
  kElect,
  kShuffleSource
};

struct WarpInstrumentation {
  std::string ptx;
  int collectives = 0;  // collective instructions checked
};

// Nullopt when the PTX is not a module this rewrite understands (no `.address_size 64`).
std::optional<WarpInstrumentation> instrument_ptx_warp_collectives(std::string_view ptx, int learner_file);

}  // namespace cudojo

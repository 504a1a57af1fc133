// The barrier half of the check build (compile/check_build.h): before every block-wide barrier
// (bar.sync, barrier.sync, bar.red, and their predicated forms) each thread counts its own pass and
// the barrier's learner line (compile/ptx_lines.h, through any inlining) counts one arrival.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudojo {

struct PtxInstrumentation {
  std::string ptx;
  int barriers = 0;  // how many barrier instructions were counted
};

// `source_file_index`: the `.file` number whose `.loc` lines are the learner's; other files' lines
// (and barriers with no `.loc` before them) count under line 0. Nullopt when the PTX is not a
// module this rewrite understands (no `.address_size 64`).
std::optional<PtxInstrumentation> instrument_ptx_barriers(std::string_view ptx, int source_file_index = 1);

}  // namespace cudojo

// The barrier check for kernels that arrive as PTX (the Python and Rust front ends): the same
// counters the CUDA build gets from its pre-included header (compile/barrier_instrumentation.h),
// added to the PTX instead, so the worker reads them back the same way. Before every block-wide
// barrier (bar.sync, barrier.sync, bar.red, and their predicated forms) each thread counts its own
// pass and the barrier's source line (from the nearest `.loc` before it) counts one arrival.
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

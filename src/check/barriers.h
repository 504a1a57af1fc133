// Judges the counts the barrier-check build left behind (compile/barrier_instrumentation.h).
// A barrier is only defined when every thread of the block reaches it; then every thread of a
// block passes the same number of barriers, and every barrier line sees a whole number of blocks'
// worth of threads. A __syncthreads() inside `if (tid < half)`, or after an early return, breaks
// both, even when the sums come out right (on an H200 they do, and compute-sanitizer's synccheck
// stays silent), so this, not the tests, is what names it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "check/outcome.h"

namespace cudojo {

struct BarrierCounts {
  std::uint32_t threads_per_block = 0;  // 0: no counted barrier ran
  std::uint32_t blocks = 0;
  std::vector<std::uint32_t> passes_per_thread;  // block-major; may cover only the first blocks
  std::vector<std::uint32_t> arrivals_per_line;  // index = source line; [0] = lines past the table
};

// divergent_barrier with the first offending line, or nothing when every barrier was uniform.
std::optional<Finding> divergent_barrier_finding(const BarrierCounts& counts);

}  // namespace cudojo

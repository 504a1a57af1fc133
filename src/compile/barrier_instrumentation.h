// The barrier-check build of a submission: the same source, compiled a second time with a header
// pre-included that turns every __syncthreads() (and its _count/_and/_or forms) into a counted
// barrier. Each thread counts the barriers it passed, each source line counts the threads that
// arrived, and the worker reads both back after one launch (check/barriers.h judges them).
// Only this build carries the counters; the build that is tested and timed is untouched.
#pragma once

#include <cstdint>
#include <string_view>

namespace cudojo {

inline constexpr std::string_view kBarrierHeaderName = "cudojo_barrier_check.h";
// Device symbols the worker reads (extern "C", so their names are not mangled).
inline constexpr const char* kBarrierPassesSymbol = "cudojo_barrier_passes";
inline constexpr const char* kBarrierLinesSymbol = "cudojo_barrier_line_arrivals";
inline constexpr const char* kBarrierShapeSymbol = "cudojo_barrier_shape";
// One counter per thread for the first 2^20 threads of the launch (the largest grid a stage
// launches at the check's size); one per source line below 4096, line 0 collecting the rest.
inline constexpr std::uint32_t kBarrierThreadSlots = 1u << 20;
inline constexpr std::uint32_t kBarrierLineSlots = 4096;

// The header's text.
std::string_view barrier_check_header();

}  // namespace cudojo

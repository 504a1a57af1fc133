// The check build of a submission: its PTX, with counters added where a run can break a rule that
// no answer shows. The worker launches it once, after the tests, and reads the counters back
// (check/barriers.h and check/warp_collectives.h judge them); the build that is tested and timed
// is untouched. One rewrite serves CUDA C++, Python and Rust alike, since all three reach the GPU
// as PTX, and it sees what the compiler emitted: a barrier or a shuffle written through
// cooperative groups, CUB or inline asm is counted like one written by name.
//   - Before every block-wide barrier, each thread counts its pass and the barrier's line counts
//     one arrival (compile/ptx_barriers.h).
//   - Before a thread leaves the kernel, it marks its lane as gone in its warp's word; after every
//     warp collective (`*_sync` shuffles, votes, matches, reduces, __syncwarp, elect), each lane
//     checks whether the collective's mask named a lane already gone (compile/ptx_warp_collectives.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudojo {

// Device symbols the worker reads back.
inline constexpr const char* kBarrierPassesSymbol = "cudojo_barrier_passes";
inline constexpr const char* kBarrierLinesSymbol = "cudojo_barrier_line_arrivals";
inline constexpr const char* kBarrierShapeSymbol = "cudojo_barrier_shape";
inline constexpr const char* kWarpGoneSymbol = "cudojo_warp_gone_lanes";
inline constexpr const char* kWarpMaskLinesSymbol = "cudojo_warp_mask_lines";
inline constexpr const char* kWarpMaskRecordSymbol = "cudojo_warp_mask_record";
// One counter per thread for the first 2^20 threads of the launch (the largest grid a stage
// launches at the check's size), so one word per warp for their 2^15 warps; one per source line
// below 4096, line 0 collecting the rest.
inline constexpr std::uint32_t kBarrierThreadSlots = 1u << 20;
inline constexpr std::uint32_t kWarpSlots = kBarrierThreadSlots / 32;
inline constexpr std::uint32_t kBarrierLineSlots = 4096;
// Two records of these fields: [0] the first collective seen whose mask named a gone lane (and,
// in it alone, how many lane-executions were checked), [1] the first shuffle seen reading a gone
// lane.
enum WarpMaskRecordField : std::uint32_t {
  kRecordTaken,
  kRecordLine,
  kRecordBlock,
  kRecordWarp,
  kRecordGoneLanes,
  kRecordKind,
  kRecordChecked,
  kRecordFields
};

// The judge's counter or planting name that the learner's module already declares or uses, if any: such a
// module would collide with the counters (or forge them), so it is refused as a compile error.
std::optional<std::string> judge_name_in_module(std::string_view ptx);

struct CheckBuild {
  std::string ptx;
  int barriers = 0;     // block-wide barrier instructions counted
  int collectives = 0;  // warp collectives checked
};

// `learner_file`: the `.file` number of the learner's lines (compile/ptx_lines.h). Nullopt when the
// PTX is not a module the rewrite understands (no `.address_size 64`).
std::optional<CheckBuild> make_check_build(std::string_view ptx, int learner_file);

}  // namespace cudojo

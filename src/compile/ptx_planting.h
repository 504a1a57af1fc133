// The planted build of a submission: its PTX, with a prologue at the start of every kernel that
// fills the block's own shared memory with the judge's pattern before the learner's first
// instruction. The tests launch it instead of filling every SM's shared memory from a separate
// kernel first: no other process's kernel can run between the fill and the learner's code, so the
// tests need no turn alone on a GPU other jobs share (run/worker.cc). The build that is timed,
// profiled and sanitized is untouched.
//
// What the prologue fills, each block for itself, before a barrier of the whole block:
//   - every static shared variable of the module (whether or not this kernel names it: a device
//     function reached through a pointer names its own where no reading of calls would look), and
//     those the compiler moved into the kernel ("demoted variable");
//   - the launch's dynamic shared memory (%dynamic_smem_size bytes, through an extern array of its
//     own).
// Every static variable must be a multiple of 16 bytes with an alignment of at most 16 (and every
// extern array's alignment at most 16): then no padding lies between them, wherever ptxas puts
// them, and every byte of the block's window is filled. The pattern is a 32-bit word in the
// module's global kPlantedPatternSymbol, which the judge sets before each launch; a byte at shared
// address a gets byte (a mod 4) of it, as the fill of whole words would leave it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudojo {

inline constexpr const char* kPlantedPatternSymbol = "cudojo_planted_pattern";
inline constexpr const char* kPlantedDynamicSymbol = "cudojo_planted_dynamic";

struct PlantedBuild {
  std::string ptx;
  int kernels = 0;  // entries given the prologue
  int regions = 0;  // static shared variables filled, over all entries (the dynamic window not counted)
};

// Nullopt when the module is not one the rewrite understands: no `.address_size 64`, no kernel, a
// shared variable declared inside a device function, after a kernel's first instruction or inside
// a line of other text (inline asm's own block), one it cannot size or that could leave padding
// (above), a brace outside any function that is not a one-line initializer, or more than a few
// thousand fills over all its kernels. The judge then
// plants the older way, under a turn alone.
std::optional<PlantedBuild> make_planted_build(std::string_view ptx);

}  // namespace cudojo

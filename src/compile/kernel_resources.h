// What a kernel asks of the machine, without a GPU (issue #28): registers, spills, static shared
// memory, stack and barriers as ptxas reports them for the stage's architecture, and the theoretical
// occupancy of the stage's launch on that architecture. ptxas is the CUDA toolkit's own assembler,
// run on the module's PTX (NVRTC's for CUDA C++, the front end's for Python and Rust) inside the
// judge's sandbox, so every language is measured the same way.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"

namespace cudojo {

struct KernelResources {
  std::string kernel;                  // the entry's name in the PTX (a C++ kernel's is mangled)
  int registers = 0;                   // per thread
  int barriers = 0;                    // named barriers the kernel uses
  std::int64_t shared_bytes = 0;       // static shared memory per block
  std::int64_t stack_frame_bytes = 0;  // local memory per thread: arrays ptxas could not keep in registers
  std::int64_t spill_store_bytes = 0;  // registers spilled to local memory, per thread
  std::int64_t spill_load_bytes = 0;
};

// Reads `ptxas -v`'s report: one entry per "Compiling entry function", in order.
std::vector<KernelResources> parse_ptxas_verbose(std::string_view log);

// How many of an SM's warp slots a launch can fill at once, and what stops it filling more.
struct Occupancy {
  int blocks_per_sm = 0;
  int active_warps = 0;
  int max_warps = 0;
  double fraction = 0;     // active_warps / max_warps
  std::string limited_by;  // "warps", "blocks", "registers" or "shared memory"
};

// The theoretical occupancy of `threads_per_block` threads of a kernel using `resources`, with
// `dynamic_shared_bytes` more per block, on `arch` (sm_80, sm_86, sm_89, sm_90). Nullopt for an
// architecture without a table here, or a launch that cannot run at all (then `why` says so).
std::optional<Occupancy> theoretical_occupancy(std::string_view arch, int threads_per_block,
                                               const KernelResources& resources,
                                               std::int64_t dynamic_shared_bytes, std::string* why = nullptr);

struct ResourceReport {
  bool ok = false;
  std::string error;  // why not, in words
  std::vector<KernelResources> kernels;
  std::string cubin;  // what ptxas made, with line information (-lineinfo), for the disassembler
};

// Assembles `ptx` for `arch` with `ptxas -v` (a path: run/tools.h's find_cuda_tool finds it) in the sandbox
// (compile/sandbox.h), within the front ends' time and memory budgets, and reads its report.
ResourceReport assemble_for_resources(std::string_view ptx, const std::string& arch, const std::string& ptxas,
                                      const JudgeLimits& limits = kDefaultLimits);

void to_json(nlohmann::json& j, const KernelResources& resources);
void to_json(nlohmann::json& j, const Occupancy& occupancy);

}  // namespace cudojo

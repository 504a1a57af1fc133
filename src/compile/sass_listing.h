// The machine code a kernel becomes (issue #28): SASS, as the CUDA toolkit's own disassembler
// (nvdisasm) prints a cubin, each instruction tied to the line of the learner's source it came
// from. The cubin is ptxas's, made with -lineinfo from the module's PTX (compile/kernel_resources),
// so every language is shown the same way; for CUDA C++ it is the code the judge runs, and for
// Python and Rust, whose PTX the driver compiles when it loads it, the same toolkit's compile.
// nvdisasm ships with the toolkit on a GPU machine, not with every CPU-only toolkit: without it
// the listing says so and everything else still works.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"

namespace cudojo {

struct SassLine {
  std::optional<std::uint32_t> offset;  // the instruction's byte offset in its function; none for a label
  std::string text;                     // "IMAD R5, R5, UR4, R0 ;", "@P0 EXIT ;", or ".L_x_2:"
  unsigned line = 0;                    // the learner's source line, 0 when none (padding, CUDA's code)
};

struct SassFunction {
  std::string entry;  // the function's name in the cubin (a C++ kernel's is mangled)
  std::vector<SassLine> lines;
};

// Reads `nvdisasm -gi -c` output. `learner_file` is the name the source was compiled as: a line
// annotation whose path ends with it is the learner's. Code inlined from another file (an
// atomicAdd from CUDA's headers) takes the learner's line it was inlined at when the annotation
// names one, else the learner's line of the instructions before it.
std::vector<SassFunction> parse_nvdisasm(std::string_view listing, std::string_view learner_file);

struct SassListing {
  bool ok = false;
  std::string error;  // why not, in words (no disassembler, a refused cubin)
  std::vector<SassFunction> functions;
};

// Disassembles `cubin` with `nvdisasm` (a path: run/tools.h's find_cuda_tool finds it; empty when
// none was found) in the sandbox, within the front ends' time and memory budgets.
SassListing disassemble(std::string_view cubin, const std::string& nvdisasm, std::string_view learner_file,
                        const JudgeLimits& limits = kDefaultLimits);

void to_json(nlohmann::json& j, const SassLine& line);
void to_json(nlohmann::json& j, const SassFunction& function);

}  // namespace cudojo

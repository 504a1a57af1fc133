// Which kernels a stage's source defines, found by reading the text: cheap enough to run whenever a
// stage loads, so that a `kernel =` name no starter or reference defines is an error at once, at a
// line, instead of a compile error the first time someone runs `check`. It is a scan, not a
// parser: `cudojo course check` compiles every file for the full check (names and signatures).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stage/language.h"

namespace cudojo {

struct KernelDefinition {
  std::string name;
  int line = 0;  // 1-based, the line of the name
};

// CUDA C++: every __global__ function (comments skipped; __launch_bounds__(...) and the like
// passed over). Python: every `def` under a @cuda.jit decorator that is not device=True. Rust:
// every `fn` marked #[kernel] or declared extern "ptx-kernel".
std::vector<KernelDefinition> find_kernel_definitions(Language language, std::string_view source);

// The line of any function of that name, kernel or not (CUDA: `name(` after a type; Python: `def
// name(`; Rust: `fn name(`), so a message can say "defined, but not as a kernel".
std::optional<int> find_function_line(Language language, std::string_view source, std::string_view name);

// How a kernel is declared in the language, for messages: "a __global__ function",
// "a @cuda.jit function", "a #[kernel] fn".
std::string_view kernel_declaration(Language language);

}  // namespace cudojo

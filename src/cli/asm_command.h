// `cudojo asm STAGE FILE`: what the learner's kernel asks of the machine, without a GPU (issue #28).
// Both the learner's kernels and the reference's are built as the judge builds them (any language),
// assembled by the toolkit's ptxas for the architecture (compile/kernel_resources.h), and shown side
// by side: registers, spills, stack, static shared memory, barriers and the theoretical occupancy of
// the stage's launch (run/assembly.h). `--ptx` adds the learner's PTX and `--sass` its SASS, each
// instruction beside its source line.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "stage/stage.h"

namespace cudojo::cli {

struct AsmCommand {
  CLI::App* command = nullptr;
  std::string stage, file, lang, arch;
  bool ptx = false;
  bool sass = false;
  bool json = false;
};

std::unique_ptr<AsmCommand> add_asm_command(CLI::App& app);

// Exit codes as `build`'s: 0 shown, 1 the kernel did not compile, 2 a usage error or no ptxas.
int run_asm_command(const AsmCommand& command, const std::vector<Stage>& course);

}  // namespace cudojo::cli

// `cudojo build`: compile a kernel for one architecture without a GPU and write the build file a
// GPU machine judges with `cudojo check STAGE --build FILE`; and the reading of such a file back.
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "run/build.h"
#include "stage/stage.h"

namespace cudojo::cli {

// Compiles; on success writes `output` and says how to judge it; on a compile error prints the
// diagnostics as `check` does (file:line:col, the compiler's excerpt), writes nothing, returns 1.
int cmd_build(const Stage& stage, const SubmissionFile& submission, Language language,
              const std::string& arch, const std::string& output, bool json);

// The compiler's diagnostics as `check` shows them: severity, file:line:column, the message, and
// under it the compiler's excerpt (the source line and a caret).
void print_diagnostics(const CompileInfo& compile);

// A file `cudojo build` wrote; anything else is a usage error saying what it is instead.
SubmissionBuild read_build_file(const std::string& path);

}  // namespace cudojo::cli

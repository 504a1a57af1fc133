// One of the CUDA toolkit's own programs (ptxas, nvdisasm) run on one file in the judge's sandbox
// (compile/sandbox.h), as the front ends run Numba and rustc: the file is written into a scratch
// folder of its own bound at /job, the toolkit's folder is bound read-only where it is not under
// /usr, and the front ends' time and memory budgets hold. What the tool writes back is read from
// the folder before it is removed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "compile/sandbox.h"

namespace cudojo {

struct ToolkitToolRun {
  std::string tool;   // its path, as given
  std::string input;  // the file's bytes, written to /job/<input_name>
  std::string input_name;
  std::vector<std::string> arguments;  // after the tool's own path, naming /job/... files
  std::string output_name;             // a file the tool writes into /job, read back; empty: none
  std::size_t max_output_bytes = 4u << 20;
};

struct ToolkitToolResult {
  SandboxResult ran;
  std::string output;   // the file named output_name, when the tool exited 0
  std::string failure;  // why it could not be run at all (no scratch folder); empty when it ran
  bool succeeded() const {
    return failure.empty() && ran.started && !ran.timed_out && ran.exited && ran.code == 0;
  }
  // Why not, in words: "<tool> could not be run in the sandbox: ...", "... ran out of time", "... refused
  // ...".
  std::string error(std::string_view name, std::string_view refused_what) const;
};

ToolkitToolResult run_toolkit_tool(const ToolkitToolRun& run, const JudgeLimits& limits);

}  // namespace cudojo

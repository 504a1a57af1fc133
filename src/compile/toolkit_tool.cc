#include "compile/toolkit_tool.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace cudojo {

namespace fs = std::filesystem;

std::string ToolkitToolResult::error(std::string_view name, std::string_view refused_what) const {
  if (!failure.empty()) return failure;
  if (!ran.started) return fmt::format("{} could not be run in the sandbox: {}", name, ran.failure);
  if (ran.timed_out) return fmt::format("{} ran out of time", name);
  return fmt::format("{} refused {}: {}", name, refused_what, ran.err.substr(0, 2000));
}

ToolkitToolResult run_toolkit_tool(const ToolkitToolRun& run, const JudgeLimits& limits) {
  ToolkitToolResult result;
  std::string pattern = (fs::temp_directory_path() / "cudojo-toolkit-XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    result.failure =
        "no scratch folder for " + fs::path(run.tool).filename().string() + ": " + std::strerror(errno);
    return result;
  }
  const fs::path folder = pattern;
  {
    std::ofstream out(folder / run.input_name, std::ios::binary);
    out.write(run.input.data(), static_cast<std::streamsize>(run.input.size()));
  }
  std::error_code error;
  const fs::path real = fs::canonical(run.tool, error);
  SandboxRun sandboxed;
  sandboxed.command = {real.string()};
  sandboxed.command.insert(sandboxed.command.end(), run.arguments.begin(), run.arguments.end());
  sandboxed.job_folder = folder.string();
  // The toolkit's folder is bound at its real path when it is not under /usr (the sandbox's own).
  if (real.string().rfind("/usr/", 0) != 0)
    sandboxed.read_only.push_back({real.parent_path().string(), real.parent_path().string()});
  sandboxed.time_limit = std::chrono::milliseconds(static_cast<long long>(limits.frontend_budget_ms));
  sandboxed.memory_bytes = limits.frontend_memory_bytes;
  sandboxed.max_output_bytes = run.max_output_bytes;
  result.ran = run_in_sandbox(sandboxed);
  if (result.succeeded() && !run.output_name.empty()) {
    std::ifstream in(folder / run.output_name, std::ios::binary);
    result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::remove_all(folder, error);
  return result;
}

}  // namespace cudojo

// Runs the real cudojo binary and captures what it prints, for end-to-end tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace cudojo::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
};

// The tree the tests run in: the source tree they were built from, or, when the build folder was
// copied to another machine (the GPU machine), the folder above the test binary's build folder.
inline std::filesystem::path source_root() {
  namespace fs = std::filesystem;
  const fs::path built_from = fs::path(CUDOJO_SUBMISSIONS_DIR).parent_path().parent_path();
  if (fs::exists(built_from / "course")) return built_from;
  return fs::read_symlink("/proc/self/exe").parent_path().parent_path();
}

inline std::string cudojo_binary() {
  namespace fs = std::filesystem;
  if (fs::exists(CUDOJO_BINARY)) return CUDOJO_BINARY;
  return (fs::read_symlink("/proc/self/exe").parent_path() / "cudojo").string();
}

// Runs cudojo with `arguments`; `out` holds stdout and stderr together, or stdout alone (stderr
// dropped) when `stdout_only`, as a program reading its JSON sees it.
inline CliResult run_cli(const std::string& arguments, bool stdout_only = false) {
  CliResult result;
  const std::string command = cudojo_binary() + " " + arguments + (stdout_only ? " 2>/dev/null" : " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::string submission(const std::string& relative) {
  return (source_root() / "tests" / "submissions" / relative).string();
}

inline std::string course_file(const std::string& relative) {
  return (source_root() / "course" / "reduction" / relative).string();
}

}  // namespace cudojo::testing

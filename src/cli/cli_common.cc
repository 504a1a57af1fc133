#include "cli/cli_common.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <regex>
#include <vector>

#include "common/json_text.h"

namespace cudojo::cli {

const Stage& require_stage(const std::vector<Stage>& course, const std::string& id) {
  if (const Stage* stage = find_stage(course, id)) return *stage;
  std::string known;
  for (const auto& s : course) known += fmt::format("\n  {:<14} {}", s.id, s.slug_id());
  throw UsageError(fmt::format("no stage '{}'. Stages:{}", id, known));
}

// Ends a command that could not do its work: the reason on stderr and, under --json, one JSON
// object on stdout as well, so a program reading stdout always gets JSON.
int fail(bool json, std::string_view kind, const std::string& message) {
  std::cerr << "cudojo: " << message << "\n";
  if (json)
    std::cout << json_text({{"error", message}, {"kind", kind}, {"exit_code", kExitUsage}}, 2) << "\n";
  return kExitUsage;
}

// An architecture NVRTC can compile for: sm_NN (or sm_NNa), CUDA 13 supporting sm_75 and newer.
std::string require_arch(const std::string& arch) {
  static const std::regex kArch(R"(sm_(\d{2,3})[af]?)");
  std::smatch match;
  if (!std::regex_match(arch, match, kArch) || std::stoi(match[1]) < 75) {
    throw UsageError(
        fmt::format("--arch {}: give an architecture CUDA 13 compiles for, sm_75 or newer "
                    "(an H100 or H200 is sm_90)",
                    arch));
  }
  return arch;
}

Language require_language(const std::string& word) {
  if (auto language = parse_language(word)) return *language;
  throw UsageError(fmt::format("no language '{}'; the course's languages are {}", word, language_list()));
}

// The language of a submission: --lang when given, else the file's extension.
Language language_of(const std::string& path, const std::string& lang_option) {
  if (!lang_option.empty()) return require_language(lang_option);
  if (auto language = language_from_path(path)) return *language;
  throw UsageError(fmt::format(
      "cannot tell the language of '{}' from its name: use .cu (CUDA C++), .py (Python with Numba) or .rs "
      "(Rust), or pass --lang {{{}}}",
      path, language_list()));
}

void require_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw UsageError(fmt::format("'{}' is a folder; give the file that holds your kernel", path));
  }
}

namespace {

std::string what_kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

UsageError not_a_regular_file(const std::string& path, mode_t mode) {
  return UsageError(
      fmt::format("'{}' is {}; give a regular file (cudojo reads only those, so that nothing waits "
                  "on a pipe or reads a device without end)",
                  path, what_kind_of_file(mode)));
}

}  // namespace

std::string read_regular_file(const std::string& path, std::size_t limit) {
  // Looked at before it is opened, so that a device is never opened; then opened without blocking
  // (a FIFO's open waits for a writer) and looked at again, in case it was swapped in between.
  struct stat info {};
  if (stat(path.c_str(), &info) != 0)
    throw UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) throw not_a_regular_file(path, info.st_mode);
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (fstat(fd, &info) != 0)
    throw UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  if (!S_ISREG(info.st_mode)) throw not_a_regular_file(path, info.st_mode);
  std::string text;
  char buffer[65536];
  while (text.size() <= limit) {
    const ssize_t n = read(fd, buffer, std::min(sizeof buffer, limit + 1 - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

std::string read_submission(const std::string& path, std::size_t limit) {
  require_file(path);
  // One byte past the limit, so the judge can say by how much, without reading a huge file.
  return read_regular_file(path, limit);
}

}  // namespace cudojo::cli

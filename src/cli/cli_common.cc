#include "cli/cli_common.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <nvrtc.h>
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
#include "compile/nvrtc_compiler.h"

namespace cudojo::cli {

namespace {
std::string why_unreadable(int error);
}  // namespace

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

namespace {

// The architectures this NVRTC compiles for, as numbers (75, 80, 90, ...).
std::vector<int> nvrtc_architectures() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

}  // namespace

std::string require_arch(const std::string& arch) {
  static const std::regex kArch(R"(sm_(\d{2,3})[af]?)");
  const std::vector<int> known = nvrtc_architectures();
  std::smatch match;
  if (!std::regex_match(arch, match, kArch) ||
      std::find(known.begin(), known.end(), std::stoi(match[1])) == known.end()) {
    std::string names;
    for (int number : known) names += fmt::format("{}sm_{}", names.empty() ? "" : ", ", number);
    throw UsageError(fmt::format("--arch {}: this NVRTC ({}) compiles for {} (an H100 or H200 is sm_90)",
                                 arch, nvrtc_version(), names.empty() ? "sm_75 and newer" : names));
  }
  return arch;
}

Language require_language(const std::string& word) {
  if (auto language = parse_language(word)) return *language;
  throw UsageError(
      fmt::format("no language '{}'; the course's languages are {} (also c++, cpp, cu; py, numba; rs)", word,
                  language_list()));
}

Language language_of(const std::string& path, const std::string& lang_option) {
  if (path == "-" && lang_option.empty())
    throw UsageError(
        "reading the kernel from standard input ('-') needs its language: add --lang cuda, "
        "--lang python or --lang rust");
  const std::optional<Language> by_name = path == "-" ? std::nullopt : language_from_path(path);
  if (!lang_option.empty()) {
    const Language asked = require_language(lang_option);
    if (by_name && *by_name != asked) {
      throw UsageError(fmt::format(
          "--lang {} says {}, but '{}' has the {} extension of {}: drop --lang, or rename the file to {}",
          lang_option, display_name(asked), path, std::filesystem::path(path).extension().string(),
          display_name(*by_name), source_extension(asked)));
    }
    return asked;
  }
  if (by_name) return *by_name;
  throw UsageError(fmt::format(
      "cannot tell the language of '{}' from its name: use .cu (CUDA C++), .py (Python with Numba) or .rs "
      "(Rust), or pass --lang {{{}}}",
      path, language_list()));
}

void require_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0)
    throw UsageError(fmt::format("cannot read '{}': {}", path, why_unreadable(errno)));
  if (S_ISDIR(info.st_mode))
    throw UsageError(fmt::format("cannot read '{}': it is a directory, not a file", path));
}

namespace {

// Why a file could not be read, in words (strerror's are capitalized mid-sentence).
std::string why_unreadable(int error) {
  if (error == ENOENT) return "no such file";
  if (error == EACCES || error == EPERM) return "permission denied";
  if (error == EISDIR) return "it is a directory";
  if (error == ENOTDIR) return "a part of the path is not a directory";
  return std::strerror(error);
}

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
    throw UsageError(fmt::format("cannot read '{}': {}", path, why_unreadable(errno)));
  if (!S_ISREG(info.st_mode)) throw not_a_regular_file(path, info.st_mode);
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw UsageError(fmt::format("cannot read '{}': {}", path, why_unreadable(errno)));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (fstat(fd, &info) != 0)
    throw UsageError(fmt::format("cannot read '{}': {}", path, why_unreadable(errno)));
  if (!S_ISREG(info.st_mode)) throw not_a_regular_file(path, info.st_mode);
  std::string text;
  char buffer[65536];
  while (text.size() <= limit) {
    const ssize_t n = read(fd, buffer, std::min(sizeof buffer, limit + 1 - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw UsageError(fmt::format("cannot read '{}': {}", path, why_unreadable(errno)));
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

SubmissionFile read_submission(const std::string& path, Language language, std::size_t limit) {
  SubmissionFile submission;
  if (path == "-") {
    // Standard input: one byte past the limit is kept, the rest only counted (up to 1 GiB), so the
    // judge can say how large it was.
    submission.file_name = "stdin" + std::string(source_extension(language));
    char buffer[65536];
    while (submission.bytes < (std::uint64_t{1} << 30)) {
      const ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw UsageError(fmt::format("cannot read standard input: {}", why_unreadable(errno)));
      if (n == 0) break;
      submission.bytes += static_cast<std::uint64_t>(n);
      if (submission.source.size() <= limit)
        submission.source.append(buffer,
                                 std::min(static_cast<std::size_t>(n), limit + 1 - submission.source.size()));
    }
    return submission;
  }
  require_file(path);
  submission.source = read_regular_file(path, limit);
  submission.file_name = sanitize_file_name(path);
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  submission.bytes =
      error ? submission.source.size() : std::max<std::uint64_t>(size, submission.source.size());
  return submission;
}

void state_real_size(CompileInfo& compile, const SubmissionFile& submission, const JudgeLimits& limits) {
  if (submission.bytes <= limits.max_source_bytes || compile.ok) return;
  const std::string sentence =
      fmt::format("the source is {} bytes; the limit is {} bytes ({} KiB)", submission.bytes,
                  limits.max_source_bytes, limits.max_source_bytes / 1024);
  compile.log = fmt::format("{}: {}", submission.file_name, sentence);
  compile.diagnostics = {Diagnostic(submission.file_name, 0, "error", sentence)};
}

}  // namespace cudojo::cli

// What the cudojo command's subcommands share: the usage error and its exit code, and the checks of
// what a user typed (a stage, an architecture, a language, a file), each failing with a sentence
// that says what to type instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "report/report.h"
#include "stage/language.h"
#include "stage/stage.h"

namespace cudojo::cli {

inline constexpr int kExitUsage = 2;

// The user asked for something that cannot be done as asked; what() says what to do instead.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const Stage& require_stage(const std::vector<Stage>& course, const std::string& id);
// Ends a command that could not do its work: the reason on stderr and, under --json, one JSON
// object on stdout as well, so a program reading stdout always gets JSON. Returns kExitUsage.
int fail(bool json, std::string_view kind, const std::string& message);
// An architecture this NVRTC compiles for: sm_NN (or sm_NNa, sm_NNf) where NN is in NVRTC's own list
// of supported architectures; anything else is a usage error before anything compiles.
std::string require_arch(const std::string& arch);
Language require_language(const std::string& word);
// The language of a submission: --lang when given, else the file's extension. A --lang that
// contradicts the extension is a usage error naming both; "-" (standard input) needs --lang.
Language language_of(const std::string& path, const std::string& lang_option);
void require_file(const std::string& path);
// At most `limit` + 1 bytes of a regular file; anything else (a FIFO, a device, a socket, a folder)
// is a usage error at once, never a read that waits or never ends.
std::string read_regular_file(const std::string& path, std::size_t limit);

// The learner's kernel as read: at most the limit + 1 bytes of it (so the judge refuses it without
// reading a huge file), its real size, and the name reports give it.
struct SubmissionFile {
  std::string source;
  std::uint64_t bytes = 0;  // the whole file's size, also past what was read
  std::string file_name;    // the file's own name; "stdin.cu" (.py, .rs) for standard input
};
// "-" reads standard input (its language from --lang: see language_of).
SubmissionFile read_submission(const std::string& path, Language language, std::size_t limit);
// The judge read only limit + 1 bytes; say the file's real size, naming the file once.
void state_real_size(CompileInfo& compile, const SubmissionFile& submission, const JudgeLimits& limits);

}  // namespace cudojo::cli

// What the cudojo command's subcommands share: the usage error and its exit code, and the checks of
// what a user typed (a stage, an architecture, a language, a file), each failing with a sentence
// that says what to type instead.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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
// An architecture NVRTC can compile for: sm_NN (or sm_NNa), CUDA 13 supporting sm_75 and newer.
std::string require_arch(const std::string& arch);
Language require_language(const std::string& word);
// The language of a submission: --lang when given, else the file's extension.
Language language_of(const std::string& path, const std::string& lang_option);
void require_file(const std::string& path);
// At most `limit` + 1 bytes of a regular file; anything else (a FIFO, a device, a socket, a folder)
// is a usage error at once, never a read that waits or never ends.
std::string read_regular_file(const std::string& path, std::size_t limit);
// The learner's file: at most `limit` + 1 bytes, so the judge can say by how much it is over.
std::string read_submission(const std::string& path, std::size_t limit);

}  // namespace cudojo::cli

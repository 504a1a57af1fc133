// What the cudojo command does with its words before CLI11 parses them: `cudojo help [COMMAND]` is
// `--help`, and a first word that names no command (or none) is an error listing the commands.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cudojo::cli {

// argv as strings, `help` rewritten to `--help` (`help check` to `check --help`).
std::vector<std::string> command_line_words(int argc, char** argv);

// The exit code (after saying why on stderr, with the commands) when the first word that is not an
// option names no command of `app`, or when there is none and no --help or --version either; else
// nullopt. `options_with_values` are the top-level options whose next word is their value.
std::optional<int> refuse_unknown_command(const CLI::App& app, const std::vector<std::string>& words,
                                          const std::vector<std::string>& options_with_values);

}  // namespace cudojo::cli

// Shell completion and the man page's command reference (issue #27), both written from the CLI11 App
// itself, so a command or option added later is completed and documented without a list kept by hand.
//
// `cudojo completion bash|zsh` prints a script for that shell; the script knows every command, its
// options and what each value is (a stage, a language, one of fixed words, a file, a folder), and asks
// the binary for the course's stages when it needs them: `cudojo __complete stages` (hidden). The same
// hidden command writes the man page's COMMANDS section for help2man: `cudojo __complete man`.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

namespace cudojo::cli {

struct CompletionCommands {
  CLI::App* completion = nullptr;  // cudojo completion bash|zsh
  CLI::App* complete = nullptr;    // cudojo __complete stages|man (hidden; the scripts' and CMake's)
  std::string shell;
  std::string what;
};

// Registers both commands on `app`. The scripts are written after parsing, from the whole App, so the
// order of registration does not matter.
std::unique_ptr<CompletionCommands> add_completion_commands(CLI::App& app);

// The exit code when one of the two commands was asked for, else nullopt. `course_dir` is where
// `__complete stages` reads the stages.
std::optional<int> run_completion_command(const CompletionCommands& commands, const CLI::App& app,
                                          const std::string& course_dir);

// Makes `cudojo --help` list each command with the first sentence of its description, one line each,
// so the list is read at a glance and help2man takes each line as one entry; `cudojo COMMAND --help`
// and the man page's COMMANDS section keep the whole text. Only `app` itself changes.
void list_commands_in_one_line(CLI::App& app);

// The scripts and the man page's section, for the commands above and for tests.
std::string bash_completion_script(const CLI::App& app);
std::string zsh_completion_script(const CLI::App& app);
// help2man's include text: a [COMMANDS] section with every command's synopsis, description and
// options, in roff.
std::string man_commands_section(const CLI::App& app);

}  // namespace cudojo::cli

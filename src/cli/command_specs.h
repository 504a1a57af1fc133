// The CLI11 App as a table for the shell completion scripts and the man page (completion.h): each
// command's subcommands, options and positionals, with the kind of every value. Nothing is listed by
// hand: a value's kind comes from its option (its name, CLI11's type and IsMember words, its
// description saying "folder"), so commands and options added later are completed and documented.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudojo::cli {

// How a value on the command line is completed:
//   stage        a stage id or alias, from `cudojo __complete stages`
//   lang         a language's name (cuda, python, rust)
//   words:a,b    one of fixed words (CLI11's IsMember)
//   file, dir    a file, a folder (where the option's name or description says so)
//   none         nothing to offer (numbers, names, ids, addresses)
// A positional's kind ends in "..." when it repeats.
struct OptionSpec {
  std::vector<std::string> names;  // "--output", "-o"
  std::string summary;
  std::string kind;  // empty for a flag
  const CLI::Option* option = nullptr;
};

struct CommandSpec {
  std::string path;  // the words after `cudojo`: "", "check", "course check"
  const CLI::App* app = nullptr;
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, summary
  std::vector<OptionSpec> options;
  std::vector<std::string> arguments;  // each positional's kind, in order
  std::vector<const CLI::Option*> positionals;
};

// Every command of `app`, itself first (path ""), then each subcommand, depth first; hidden ones
// (an empty group) left out.
std::vector<CommandSpec> command_specs(const CLI::App& app);

std::string join(const std::vector<std::string>& words, std::string_view separator = " ");
std::string trimmed(std::string text);
// Single-quoted for bash and zsh alike.
std::string shell_quoted(std::string_view text);
std::vector<std::string> shell_quoted_each(const std::vector<std::string>& words);
// The languages' names, as --lang takes them, separated by spaces.
std::string language_words();

}  // namespace cudojo::cli

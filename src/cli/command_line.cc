#include "cli/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/cli_common.h"

namespace cudojo::cli {

std::vector<std::string> command_line_words(int argc, char** argv) {
  std::vector<std::string> words(argv, argv + argc);
  if (words.size() >= 2 && words[1] == "help") {
    words.erase(words.begin() + 1);
    words.push_back("--help");
  }
  return words;
}

namespace {

// Each visible command with its description's first clause, one a line.
std::string command_list(const CLI::App& app) {
  std::string commands;
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->get_group().empty()) continue;  // hidden
    std::string summary = command->get_description();
    summary.erase(std::min(summary.find_first_of(".:(,\n"), summary.size()));
    while (summary.ends_with(' ')) summary.pop_back();
    commands += fmt::format("\n  {:<12} {}", command->get_name(), summary);
  }
  return commands;
}

}  // namespace

std::optional<int> refuse_unknown_command(const CLI::App& app, const std::vector<std::string>& words,
                                          const std::vector<std::string>& options_with_values) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (std::find(options_with_values.begin(), options_with_values.end(), word) !=
        options_with_values.end()) {
      ++i;  // its value
      continue;
    }
    if (word == "-h" || word == "--help" || word == "-V" || word == "--version") return std::nullopt;
    if (word.starts_with("-")) continue;
    for (const CLI::App* command : app.get_subcommands({}))
      if (command->get_name() == word) return std::nullopt;
    std::cerr << fmt::format("cudojo: unknown command '{}'. The commands:{}\nSee `cudojo --help` for more.\n",
                             word, command_list(app));
    return kExitUsage;
  }
  std::cerr << fmt::format("cudojo: give a command. The commands:{}\nSee `cudojo --help` for more.\n",
                           command_list(app));
  return kExitUsage;
}

}  // namespace cudojo::cli

#include "cli/command_specs.h"

#include <algorithm>
#include <cctype>

#include "stage/language.h"

namespace cudojo::cli {

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : std::string(separator)) + word;
  return text;
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

namespace {

// A command's description up to its first clause, as `cudojo` lists its commands (command_line.cc).
std::string command_summary(const std::string& description) {
  return trimmed(description.substr(0, std::min(description.find_first_of(".:(,\n"), description.size())));
}

// An option's description up to its first sentence, parenthesis or line.
std::string option_summary(const std::string& description) {
  std::size_t end = description.find_first_of("(\n;");
  end = std::min(end, description.find(". "));
  return trimmed(description.substr(0, std::min(end, description.size())));
}

std::vector<std::string> option_names(const CLI::Option& option) {
  std::vector<std::string> names;
  for (const auto& name : option.get_lnames()) names.push_back("--" + name);
  for (const auto& name : option.get_snames()) names.push_back("-" + name);
  return names;
}

// CLI11 writes an IsMember check's words into the type name: "TEXT:{auto,always,never}". Words a
// shell would have to quote are not offered.
std::vector<std::string> fixed_words(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const std::size_t open = type.find(":{");
  if (open == std::string::npos || !type.ends_with('}')) return {};
  std::vector<std::string> words;
  std::string word;
  for (const char c : type.substr(open + 2, type.size() - open - 3) + ",") {
    if (c != ',') {
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("_.+/-").find(c) == std::string::npos)
        return {};
      word += c;
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  return words;
}

std::string value_kind(const CLI::Option& option) {
  const std::vector<std::string> names = option_names(option);
  const bool positional = names.empty();
  const auto named = [&](std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end() ||
           (positional && option.get_name() == name);
  };
  if (const auto words = fixed_words(option); !words.empty()) return "words:" + join(words, ",");
  if (named("stage") || named("--stage")) return "stage";
  if (named("--lang")) return "lang";
  const std::string type = option.get_type_name();
  if (type.substr(0, type.find(':')) != "TEXT") return "none";  // INT, UINT, FLOAT, SECONDS...
  std::string description = option.get_description();
  std::transform(description.begin(), description.end(), description.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (description.find("folder") != std::string::npos || description.find("directory") != std::string::npos)
    return "dir";
  // A file where the option says so ("the build file to write", "a PEM certificate"), or is named so.
  if (named("file") || named("--output") || description.find("file") != std::string::npos ||
      description.find("pem ") != std::string::npos)
    return "file";
  return "none";
}

void collect(const CLI::App& app, const std::string& path, std::vector<CommandSpec>& specs) {
  CommandSpec spec;
  spec.path = path;
  spec.app = &app;
  for (const CLI::Option* option : app.get_options({})) {
    if (option->get_group().empty()) continue;  // hidden
    std::vector<std::string> names = option_names(*option);
    if (names.empty()) {
      spec.arguments.push_back(value_kind(*option) + (option->get_expected_max() > 1 ? "..." : ""));
      spec.positionals.push_back(option);
      continue;
    }
    const bool flag = option->get_items_expected_max() == 0;
    spec.options.push_back({std::move(names), option_summary(option->get_description()),
                            flag ? "" : value_kind(*option), option});
  }
  std::vector<const CLI::App*> children;
  for (const CLI::App* command : app.get_subcommands({})) {
    if (command->get_group().empty()) continue;  // hidden, as __complete
    spec.subcommands.emplace_back(command->get_name(), command_summary(command->get_description()));
    children.push_back(command);
  }
  specs.push_back(std::move(spec));
  for (const CLI::App* command : children)
    collect(*command, path.empty() ? command->get_name() : path + " " + command->get_name(), specs);
}

}  // namespace

std::vector<CommandSpec> command_specs(const CLI::App& app) {
  std::vector<CommandSpec> specs;
  collect(app, "", specs);
  return specs;
}

// Single-quoted for bash and zsh alike.
std::string shell_quoted(std::string_view text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> shell_quoted_each(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& word : words) out.push_back(shell_quoted(word));
  return out;
}

std::string language_words() {
  std::vector<std::string> names;
  for (const Language language : all_languages()) names.emplace_back(to_string(language));
  return join(names);
}

}  // namespace cudojo::cli

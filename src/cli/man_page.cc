// The man page's COMMANDS section for help2man, and `cudojo --help`'s one-line command list
// (completion.h), both from the command table (command_specs.h).
#include <algorithm>
#include <cctype>
#include <sstream>
#include <string_view>

#include "cli/command_specs.h"
#include "cli/completion.h"

namespace cudojo::cli {

namespace {

// roff text: backslashes and minus signs escaped (so options can be copied), a control character at
// the start of a line made plain.
std::string roff(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (out.starts_with('.') || out.starts_with('\'')) out.insert(0, "\\&");
  return out;
}

// A description's lines: indented ones (the examples) kept as they are, the rest filled.
std::string roff_paragraph(const std::string& text) {
  std::string out;
  bool example = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const bool indented = line.starts_with("  ");
    if (indented != example) out += indented ? ".nf\n" : ".fi\n";
    example = indented;
    out += roff(line) + "\n";
  }
  if (example) out += ".fi\n";
  return out;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// "cudojo check STAGE [FILE] [OPTIONS]"
std::string synopsis(const CommandSpec& spec) {
  std::string text = "cudojo " + spec.path;
  for (const CLI::Option* positional : spec.positionals) {
    std::string name = upper(positional->get_name()) + (positional->get_expected_max() > 1 ? "..." : "");
    text += " " + (positional->get_required() ? name : "[" + name + "]");
  }
  if (!spec.subcommands.empty()) text += " COMMAND";
  if (spec.options.size() > 1) text += " [OPTIONS]";  // more than --help
  return text;
}

// The first sentence of a description, on one line: up to its first ". " or line end, a closing ':'
// (which introduced examples) dropped.
std::string first_sentence(const std::string& description) {
  std::string text = description.substr(0, description.find('\n'));
  if (const std::size_t end = text.find(". "); end != std::string::npos) text.erase(end + 1);
  text = trimmed(text);
  if (text.ends_with(':')) text.pop_back();
  return text;
}

class OneLineCommandList : public CLI::Formatter {
 public:
  explicit OneLineCommandList(const CLI::Formatter& settings) : CLI::Formatter(settings) {}
  std::string make_subcommand(const CLI::App* command) const override {
    std::stringstream out;
    CLI::detail::format_help(out, command->get_display_name(true), first_sentence(command->get_description()),
                             column_width_);
    return out.str();
  }
};

}  // namespace

void list_commands_in_one_line(CLI::App& app) {
  // A formatter is copied to subcommands when they are made; theirs stay as they are.
  const auto* current = dynamic_cast<const CLI::Formatter*>(app.get_formatter().get());
  app.formatter(std::make_shared<OneLineCommandList>(current ? *current : CLI::Formatter()));
}

std::string man_commands_section(const CLI::App& app) {
  std::string text =
      "[COMMANDS]\n"
      ".\\\" Written by `cudojo __complete man` from cudojo's command definitions.\n"
      "Each command's own options; \\fBcudojo help\\fR \\fICOMMAND\\fR prints the same.\n";
  for (const CommandSpec& spec : command_specs(app)) {
    if (spec.path.empty()) continue;  // help2man's own sections, from `cudojo --help`
    text += ".SS \"" + roff(synopsis(spec)) + "\"\n" + roff_paragraph(spec.app->get_description());
    for (const OptionSpec& option : spec.options) {
      if (option.option == spec.app->get_help_ptr()) continue;
      std::vector<std::string> names;
      for (const auto& name : option.names) names.push_back("\\fB" + roff(name) + "\\fR");
      text += ".TP\n" + join(names, ", ");
      if (!option.kind.empty()) text += " \\fI" + roff(option.option->get_type_name()) + "\\fR";
      text += "\n" + roff_paragraph(option.option->get_description());
    }
  }
  return text;
}
}  // namespace cudojo::cli

// `cudojo completion` and the hidden `cudojo __complete` (completion.h); the scripts are written in
// completion_scripts.cc, the man page's section in man_page.cc, both from command_specs.h's table.
#include "cli/completion.h"

#include <iostream>

#include "stage/stage.h"

namespace cudojo::cli {

std::unique_ptr<CompletionCommands> add_completion_commands(CLI::App& app) {
  auto c = std::make_unique<CompletionCommands>();
  c->completion = app.add_subcommand(
      "completion",
      "Print a completion script for bash or zsh (commands, options, stage ids, languages, files):\n"
      "  source <(cudojo completion bash)     in ~/.bashrc\n"
      "  source <(cudojo completion zsh)      in ~/.zshrc\n"
      "The script asks cudojo for the course's stages as you type, so they stay current.");
  c->completion->add_option("shell", c->shell, "The shell: bash or zsh")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh"}));
  // For the scripts (stages) and for CMake's man page target (man); not listed in --help.
  c->complete = app.add_subcommand("__complete", "What the completion scripts and the man page ask for");
  c->complete->group("");
  c->complete->add_option("what", c->what, "stages or man")
      ->required()
      ->check(CLI::IsMember({"stages", "man"}));
  return c;
}

std::optional<int> run_completion_command(const CompletionCommands& commands, const CLI::App& app,
                                          const std::string& course_dir) {
  if (*commands.completion) {
    std::cout << (commands.shell == "zsh" ? zsh_completion_script(app) : bash_completion_script(app));
    return 0;
  }
  if (!*commands.complete) return std::nullopt;
  if (commands.what == "man") {
    std::cout << man_commands_section(app);
    return 0;
  }
  // Each good stage's id and alias. A course that cannot be read offers nothing and says nothing: a
  // shell completing a word has nowhere to show an error.
  try {
    for (const Stage& stage : load_course_report(course_dir).stages)
      std::cout << stage.id << "\n" << stage.slug_id() << "\n";
  } catch (const std::exception&) {
  }
  return 0;
}
}  // namespace cudojo::cli

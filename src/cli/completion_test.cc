// Shell completion and the man page (issue #27), run as the real binary: `cudojo completion bash` is
// valid bash and, sourced in a real bash with COMP_WORDS set as bash sets them, completes commands,
// stage ids, languages, fixed words and files; every command and option that `--help` lists (walked
// from the top, so one added later counts) is completed; the zsh script parses; the man page names
// every command. No GPU needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../../tests/e2e/run_cli.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;
using testing::cudojo_binary;
using testing::run_cli;

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += "[" + word + "] ";
  return text;
}

// Single-quoted for bash.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool program_found(const std::string& name) {
  return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

// What `cudojo COMMAND --help` lists: its subcommands' names and its options' names (-o and --output
// both), read from CLI11's "Subcommands:" and "Options:" sections.
struct HelpLists {
  std::vector<std::string> subcommands, options;
};

HelpLists help_lists(const std::string& command) {
  HelpLists lists;
  const auto help = run_cli(command + " --help");
  std::string section;
  for (const std::string& line : lines_of(help.out)) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    // An entry starts two spaces in; a continuation of a description is indented further.
    if (line.size() < 3 || line[2] == ' ') continue;
    const std::string first = line.substr(2, line.find(' ', 2) - 2);
    if (section.starts_with("Subcommands:")) lists.subcommands.push_back(first);
    if (section.starts_with("Options:") && first.starts_with("-")) {
      std::istringstream names(first);
      for (std::string name; std::getline(names, name, ',');) lists.options.push_back(name);
    }
  }
  return lists;
}

// Every command path (`check`, `course check`...), from the top-level --help down.
std::vector<std::string> every_command() {
  std::vector<std::string> commands, pending{""};
  while (!pending.empty()) {
    const std::string command = pending.back();
    pending.pop_back();
    for (const auto& sub : help_lists(command).subcommands) {
      const std::string path = command.empty() ? sub : command + " " + sub;
      commands.push_back(path);
      pending.push_back(path);
    }
  }
  return commands;
}

// A folder of its own for each test, holding the scripts the binary printed.
class CliCompletion : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cudojo_completion_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const std::string shell : {"bash", "zsh"}) {
      const auto script = run_cli("completion " + shell + " 2>/dev/null");
      ASSERT_EQ(script.exit_code, 0) << script.out;
      std::ofstream(dir_ / ("cudojo." + shell)) << script.out;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // What bash offers for the last of `words` (the word under the cursor; "" for a fresh word) after
  // `cudojo` and the others, with the script sourced in a real bash: the function that `complete -p
  // cudojo` names is called as bash calls it.
  std::vector<std::string> bash_completes(const std::vector<std::string>& words) {
    std::string array = quoted(cudojo_binary());
    std::string line = cudojo_binary();
    for (const auto& word : words) {
      array += " " + quoted(word);
      line += " " + word;
    }
    const fs::path driver = dir_ / "driver.sh";
    std::ofstream(driver) << "source " << quoted((dir_ / "cudojo.bash").string()) << "\n"
                          << "function=$(complete -p cudojo) function=${function#*-F } "
                             "function=${function%% *}\n"
                          << "COMP_WORDS=(" << array << ")\nCOMP_CWORD=" << words.size() << "\n"
                          << "COMP_LINE=" << quoted(line) << "\nCOMP_POINT=${#COMP_LINE}\n"
                          << "\"$function\" cudojo \"${COMP_WORDS[COMP_CWORD]}\" "
                             "\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
                          << "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    std::string out;
    FILE* pipe = popen(
        ("cd " + quoted(dir_.string()) + " && bash --norc --noprofile " + quoted(driver.string()) + " 2>&1")
            .c_str(),
        "r");
    if (!pipe) return {};
    char buffer[4096];
    for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    pclose(pipe);
    std::vector<std::string> replies;
    for (const auto& reply : lines_of(out))
      if (!reply.empty()) replies.push_back(reply);
    return replies;
  }

  fs::path dir_;
};

TEST_F(CliCompletion, BashScriptIsValidBash) {
  const int code = std::system(("bash -n " + quoted((dir_ / "cudojo.bash").string())).c_str());
  EXPECT_EQ(code, 0) << "bash -n " << (dir_ / "cudojo.bash") << " failed";
}

TEST_F(CliCompletion, ZshScriptIsValidZsh) {
  if (!program_found("zsh"))
    GTEST_SKIP() << "zsh is not installed (Debian's zsh), so its script is not parsed";
  const int code = std::system(("zsh -n " + quoted((dir_ / "cudojo.zsh").string())).c_str());
  EXPECT_EQ(code, 0) << "zsh -n " << (dir_ / "cudojo.zsh") << " failed";
}

TEST_F(CliCompletion, BashCompletesCommandsStagesLanguagesWordsAndFiles) {
  EXPECT_EQ(bash_completes({"che"}), std::vector<std::string>{"check"});
  EXPECT_TRUE(has(bash_completes({"course", ""}), "check")) << joined(bash_completes({"course", ""}));
  EXPECT_TRUE(has(bash_completes({"class", ""}), "roster"));
  EXPECT_EQ(bash_completes({"rejudge", "st"}), std::vector<std::string>{"start"});
  EXPECT_EQ(bash_completes({"help", "cal"}), std::vector<std::string>{"calibrate"});

  // The stages as `cudojo stages --json` lists them: every reduction stage, nothing else.
  const auto listed = run_cli("stages --json 2>/dev/null");
  const nlohmann::json stages = nlohmann::json::parse(listed.out, nullptr, false);
  ASSERT_TRUE(stages.is_array()) << listed.out;
  const std::vector<std::string> offered = bash_completes({"check", "red"});
  int reduction_stages = 0;
  for (const auto& stage : stages) {
    const std::string id = stage.value("id", "");
    if (!id.starts_with("reduction/") || stage.value("broken", false)) continue;
    ++reduction_stages;
    EXPECT_TRUE(has(offered, id)) << id << " not in " << joined(offered);
  }
  EXPECT_GT(reduction_stages, 0) << listed.out;
  for (const auto& word : offered) EXPECT_TRUE(word.starts_with("reduction/")) << word;
  EXPECT_TRUE(has(bash_completes({"submit", "atomics/"}), "atomics/1"));
  EXPECT_TRUE(has(bash_completes({"rejudge", "start", "--stage", "red"}), "reduction/3"));

  EXPECT_EQ(bash_completes({"check", "reduction/3", "x.cu", "--lang", "p"}),
            std::vector<std::string>{"python"});
  EXPECT_EQ(bash_completes({"starter", "reduction/3", "--lang", ""}),
            (std::vector<std::string>{"cuda", "python", "rust"}));
  EXPECT_EQ(bash_completes({"check", "reduction/3", "x.cu", "--color", ""}),
            (std::vector<std::string>{"auto", "always", "never"}));
  EXPECT_EQ(bash_completes({"completion", ""}), (std::vector<std::string>{"bash", "zsh"}));
  EXPECT_TRUE(has(bash_completes({"check", "--"}), "--no-sanitize"));

  // Files where a command takes a FILE (the fixture's folder is the current one).
  std::ofstream(dir_ / "mine.cu") << "// a kernel\n";
  EXPECT_EQ(bash_completes({"check", "reduction/3", "mi"}), std::vector<std::string>{"mine.cu"});
  EXPECT_EQ(bash_completes({"build", "reduction/3", "mine.cu", "-o", "mi"}),
            std::vector<std::string>{"mine.cu"});
  // Nothing where a number or a name goes.
  EXPECT_TRUE(bash_completes({"status", ""}).empty()) << joined(bash_completes({"status", ""}));
}

TEST_F(CliCompletion, EveryCommandAndOptionThatHelpListsIsCompleted) {
  const std::vector<std::string> commands = every_command();
  ASSERT_GT(commands.size(), 20u) << "the --help walk found too few commands";
  for (const std::string& command : std::vector<std::string>{"check", "course check", "class roster",
                                                             "rejudge start", "admin create", "stage new"})
    EXPECT_TRUE(has(commands, command)) << command << " not found by walking --help";
  for (const std::string& command : commands)
    EXPECT_FALSE(command.starts_with("__")) << "hidden: " << command;

  std::vector<std::string> paths{""};
  paths.insert(paths.end(), commands.begin(), commands.end());
  for (const std::string& path : paths) {
    const HelpLists lists = help_lists(path);
    std::vector<std::string> words;
    std::istringstream in(path);
    for (std::string word; in >> word;) words.push_back(word);
    words.push_back("");
    const std::vector<std::string> subcommands = bash_completes(words);
    for (const auto& sub : lists.subcommands)
      EXPECT_TRUE(has(subcommands, sub)) << "`cudojo " << path << " <TAB>` does not offer " << sub;
    words.back() = "-";
    const std::vector<std::string> options = bash_completes(words);
    for (const auto& option : lists.options)
      EXPECT_TRUE(has(options, option)) << "`cudojo " << path << " -<TAB>` does not offer " << option;
    EXPECT_FALSE(lists.options.empty()) << path;  // --help at least
  }
}

TEST_F(CliCompletion, ManPageNamesEveryCommand) {
#ifndef CUDOJO_MAN_PAGE
  GTEST_SKIP() << "help2man was not found when CMake ran (Debian's help2man), so there is no man page";
#else
  std::ifstream in(CUDOJO_MAN_PAGE);
  ASSERT_TRUE(in) << CUDOJO_MAN_PAGE << " is missing: build the cudojo_man target";
  std::stringstream roff;
  roff << in.rdbuf();
  // The text as read: fonts dropped, escaped minus signs plain.
  std::string text;
  const std::string source = roff.str();
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source.compare(i, 2, "\\f") == 0) {
      i += 2;
    } else if (source.compare(i, 2, "\\-") == 0) {
      text += '-';
      ++i;
    } else {
      text += source[i];
    }
  }
  EXPECT_TRUE(text.find(".SH NAME\ncudojo") != std::string::npos) << text.substr(0, 400);
  const std::vector<std::string> commands = every_command();
  ASSERT_FALSE(commands.empty());
  for (const std::string& command : commands) {
    // `.SS "cudojo class roster CLASS FILE [OPTIONS]"`: the command's words, then its synopsis.
    const std::string heading = ".SS \"cudojo " + command;
    const std::size_t at =
        text.find(heading + " ") != std::string::npos ? text.find(heading + " ") : text.find(heading + "\"");
    EXPECT_NE(at, std::string::npos) << "the man page has no section for `cudojo " << command << "`";
  }
#endif
}

}  // namespace
}  // namespace cudojo

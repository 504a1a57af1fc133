// The command line's conventions (issue #27), run as the real binary: --version, `help`, an
// unknown command, `-` for standard input, --lang against the extension, --arch checked before
// compiling, `build`'s compile errors, what a file that cannot be read or is too large says, each
// subcommand's --help, and where to judge when there is no GPU. No GPU needed.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "../../tests/e2e/run_cli.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;
using testing::submission;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// A folder of its own for each test, removed after it.
class CliConventions : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cudojo_conventions_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(CliConventions, VersionAndCapitalVPrintTheVersion) {
  for (const std::string flag : {"--version", "-V"}) {
    const auto result = run_cli(flag);
    EXPECT_EQ(result.exit_code, 0) << flag;
    EXPECT_TRUE(result.out.starts_with("cudojo 0.")) << flag << ": " << result.out;
  }
}

TEST_F(CliConventions, HelpWordIsTheHelpFlag) {
  const auto help = run_cli("help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, run_cli("--help").out);
  const auto check_help = run_cli("help check");
  EXPECT_EQ(check_help.exit_code, 0);
  EXPECT_TRUE(has(check_help.out, "Usage: cudojo check")) << check_help.out;
}

TEST_F(CliConventions, AnUnknownCommandIsNamedWithTheCommands) {
  const auto result = run_cli("frobnicate");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(has(result.out, "unknown command 'frobnicate'")) << result.out;
  EXPECT_TRUE(has(result.out, "check")) << result.out;
  EXPECT_FALSE(has(result.out, "A subcommand is required")) << result.out;
  EXPECT_TRUE(has(run_cli("--course /nowhere frobnicate").out, "unknown command 'frobnicate'"));
  const auto none = run_cli("");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(has(none.out, "give a command") && has(none.out, "calibrate")) << none.out;
}

TEST_F(CliConventions, DashReadsTheKernelFromStandardInputWithLang) {
  const std::string broken = submission("reduction-2/compile_error.cu");
  const auto no_lang = run_cli("check reduction/3 - < " + broken);
  EXPECT_EQ(no_lang.exit_code, 2);
  EXPECT_TRUE(has(no_lang.out, "--lang")) << no_lang.out;
  EXPECT_EQ(run_cli("build reduction/3 - < " + broken).exit_code, 2);

  const auto checked = run_cli("check reduction/3 - --lang cuda --json < " + broken);
  EXPECT_EQ(checked.exit_code, 1) << checked.out;
  const auto report = nlohmann::json::parse(checked.out);
  EXPECT_EQ(report["verdict"], "compile_error");
  EXPECT_EQ(report["compile"]["diagnostics"][0]["file"], "stdin.cu");
  EXPECT_EQ(report["compile"]["diagnostics"][0]["line"], 6);

  const std::string output = (dir_ / "mine.build").string();
  const auto built = run_cli("build reduction/3 - --lang c++ -o " + output + " < " +
                             testing::course_file("03-block-tree/reference.cu"));
  EXPECT_EQ(built.exit_code, 0) << built.out;
  EXPECT_TRUE(fs::exists(output));
}

TEST_F(CliConventions, LangContradictingTheExtensionIsAUsageErrorNamingBoth) {
  const std::string good = testing::course_file("03-block-tree/reference.cu");
  for (const std::string command : {"check", "build"}) {
    const auto result = run_cli(command + " reduction/3 " + good + " --lang python");
    EXPECT_EQ(result.exit_code, 2) << command;
    EXPECT_TRUE(has(result.out, "--lang python")) << result.out;
    EXPECT_TRUE(has(result.out, ".cu")) << result.out;
  }
  const auto help = run_cli("check --help");
  EXPECT_TRUE(has(help.out, "c++") && has(help.out, "py,")) << help.out;
}

TEST_F(CliConventions, AnArchNvrtcDoesNotKnowIsAUsageErrorBeforeCompiling) {
  const std::string good = testing::course_file("03-block-tree/reference.cu");
  for (const std::string arch : {"sm_999", "sm_9", "banana"}) {
    for (const std::string command : {"check", "build"}) {
      const std::string output = command == "build" ? " -o " + (dir_ / "x.build").string() : "";
      const auto result = run_cli(command + " reduction/3 " + good + " --arch " + arch + output + " --json");
      EXPECT_EQ(result.exit_code, 2) << command << " " << arch << ": " << result.out;
      EXPECT_TRUE(has(result.out, "--arch " + arch)) << result.out;
      EXPECT_TRUE(has(result.out, "usage_error")) << result.out;
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "x.build"));
  EXPECT_EQ(run_cli("toolchains --arch sm_999").exit_code, 2);
}

TEST_F(CliConventions, BuildShowsCompileErrorsAsCheckDoesAndWritesNothing) {
  const std::string output = (dir_ / "broken.build").string();
  const auto result =
      run_cli("build reduction/3 " + submission("reduction-2/compile_error.cu") + " -o " + output);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(has(result.out, "compile_error.cu:6:")) << result.out;
  EXPECT_TRUE(has(result.out, "| ")) << "the compiler's excerpt: " << result.out;
  EXPECT_FALSE(has(result.out, "compile_error.cu(6)")) << "NVRTC's raw log: " << result.out;
  EXPECT_FALSE(fs::exists(output));
}

TEST_F(CliConventions, AnOversizeSourceSaysItsRealSizeAndTheLimitNamingTheFileOnce) {
  // Just over the limit, and far over it (past what is read of a file: the size is still its own).
  for (const std::size_t size : {std::size_t{70000}, std::size_t{300000}}) {
    const std::string path = write("big.cu", std::string(size, '/'));
    const std::string bytes = std::to_string(size) + " bytes";
    const std::pair<std::string, std::string> runs[] = {
        {"check reduction/2 " + path, "big.cu"},
        {"check reduction/2 - --lang cuda < " + path, "stdin.cu"},
        {"build reduction/2 " + path + " -o " + (dir_ / "big.build").string(), "big.cu"},
    };
    for (const auto& [arguments, name] : runs) {
      const auto result = run_cli(arguments);
      EXPECT_EQ(result.exit_code, 1) << arguments << ": " << result.out;
      std::istringstream lines(result.out);
      int found = 0;
      for (std::string line; std::getline(lines, line);) {
        if (!has(line, bytes)) continue;
        ++found;
        EXPECT_TRUE(has(line, "65536")) << line;
        EXPECT_TRUE(has(line, name)) << line;
        EXPECT_EQ(line.find(name), line.rfind(name)) << "the file named twice: " << line;
      }
      EXPECT_EQ(found, 1) << arguments << ": " << result.out;
      EXPECT_FALSE(has(result.out, "65537 bytes")) << "the limit plus one as the size: " << result.out;
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "big.build"));
}

TEST_F(CliConventions, AFileThatCannotBeReadSaysWhy) {
  const auto missing = run_cli("check reduction/3 " + (dir_ / "nope.cu").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(has(missing.out, "nope.cu': no such file")) << missing.out;
  fs::create_directories(dir_ / "folder.cu");
  const auto folder = run_cli("check reduction/3 " + (dir_ / "folder.cu").string());
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_TRUE(has(folder.out, "cannot read") && has(folder.out, "is a directory")) << folder.out;
  if (::geteuid() != 0) {  // root reads any file
    const std::string locked = write("locked.cu", "x");
    fs::permissions(locked, fs::perms::none);
    EXPECT_TRUE(has(run_cli("check reduction/3 " + locked).out, "permission denied"));
  }
}

TEST_F(CliConventions, OnlyTheTopLevelHelpListsTheEnvironmentAndUsageSaysCudojo) {
  const auto top = run_cli("--help");
  EXPECT_TRUE(has(top.out, "CUDOJO_NCU")) << top.out;
  EXPECT_TRUE(has(top.out, "-V,--version")) << top.out;
  for (const std::string command : {"check", "build", "serve", "stages", "course"}) {
    const auto help = run_cli(command + " --help");
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_FALSE(has(help.out, "CUDOJO_NCU")) << command << ": " << help.out;
    EXPECT_TRUE(has(help.out, "Usage: cudojo " + command)) << help.out;
    EXPECT_FALSE(has(help.out, testing::cudojo_binary())) << "the binary's path: " << help.out;
  }
  const auto serve = run_cli("serve --help");
  EXPECT_FALSE(has(serve.out, "FLOAT:FLOAT")) << serve.out;
  EXPECT_TRUE(has(serve.out, "2 to 3600 seconds")) << serve.out;
}

// The subcommands a --help lists: the lines under its "Subcommands:" heading, "  name  what it does".
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream lines(help);
  bool in_list = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("Subcommands:") || line.starts_with("SUBCOMMANDS:")) {
      in_list = true;
    } else if (in_list && line.starts_with("  ") && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (in_list && !line.empty() && line[0] != ' ') {
      in_list = false;
    }
  }
  return names;
}

TEST_F(CliConventions, NoSubcommandsHelpShowsAGarbledRangeOrType) {
  std::vector<std::string> commands = {""};
  for (std::size_t i = 0; i < commands.size(); ++i) {  // grows as nested subcommands are found
    const auto help = run_cli(commands[i] + (commands[i].empty() ? "" : " ") + "--help");
    EXPECT_EQ(help.exit_code, 0) << commands[i] << ": " << help.out;
    // CLI11's range validator writes "FLOAT:FLOAT in [2 - 3600]=30" after the option's name.
    for (const std::string garble : {" in [", "FLOAT:FLOAT", "INT:INT", "FLOAT:", "INT:"}) {
      EXPECT_FALSE(has(help.out, garble)) << "cudojo " << commands[i] << " --help: " << help.out;
    }
    for (const std::string& name : listed_subcommands(help.out))
      commands.push_back(commands[i].empty() ? name : commands[i] + " " + name);
  }
  EXPECT_GE(commands.size(), 15u) << "the subcommands were not found in the help";
}

TEST_F(CliConventions, WithoutAGpuCheckSaysHowToJudgeElsewhereAndCalibrateSpeaksOfNoSubmission) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present; no_device needs a machine without one";
  const auto result = run_cli("check reduction/3 " + testing::course_file("03-block-tree/reference.cu") +
                              " --no-sanitize --json");
  EXPECT_EQ(result.exit_code, 2);
  const std::string message = nlohmann::json::parse(result.out)["message"];
  EXPECT_TRUE(has(message, "`cudojo build reduction/3 ")) << message;
  EXPECT_TRUE(has(message, "`cudojo check reduction/3 --build ")) << message;
  const auto calibrate = run_cli("--calibration " + (dir_ / "calibration").string() + " calibrate");
  EXPECT_EQ(calibrate.exit_code, 2);
  EXPECT_TRUE(has(calibrate.out, "needs an NVIDIA GPU")) << calibrate.out;
  EXPECT_FALSE(has(calibrate.out, "submission")) << calibrate.out;
}

// (Moved from tests/e2e/cli_test.cc with the messages of issue #27.)
TEST(CliConventionsUsage, UsageErrorsAreExitTwoAndJsonWhenAskedFor) {
  const std::string file = testing::submission("reduction-2/atomic.cu");
  const std::pair<std::string, std::string> cases[] = {
      {"check reduction/2 /tmp", "is a directory"},
      {"check reduction/2 " + file + " --arch sm_10", "compiles for sm_75, sm_80"},
      {"check reduction/2 " + file + " --seed -1", "whole number"},
      {"check reduction/2 " + file + " --seed 12abc", "whole number"},
  };
  for (const auto& [arguments, words] : cases) {
    auto text = run_cli(arguments);
    EXPECT_EQ(text.exit_code, 2) << arguments << "\n" << text.out;
    EXPECT_NE(text.out.find(words), std::string::npos) << arguments << "\n" << text.out;
    // stdout holds one JSON object; run_cli also merges stderr, which says the same in words.
    auto json = run_cli(arguments + " --json");
    EXPECT_EQ(json.exit_code, 2);
    const auto start = json.out.find('{'), end = json.out.rfind('}');
    ASSERT_NE(start, std::string::npos) << json.out;
    const auto object = nlohmann::json::parse(json.out.substr(start, end - start + 1));
    EXPECT_EQ(object["kind"], "usage_error") << json.out;
    EXPECT_NE(object["error"].get<std::string>().find(words), std::string::npos);
  }
}

// A program that asked for --json reads stdout: a usage error CLI11 finds is JSON there too.
TEST_F(CliConventions, AUsageErrorUnderJsonIsJsonOnStdout) {
  const auto result = run_cli("status abc --json", /*stdout_only=*/true);
  EXPECT_EQ(result.exit_code, 2);
  const auto parsed = nlohmann::json::parse(result.out, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << result.out;
  EXPECT_EQ(parsed["kind"], "usage");
  EXPECT_NE(parsed["error"].get<std::string>().find("not a job number"), std::string::npos) << result.out;
}

// CLI11 would read 2^64 as 2^63-1 and ask the server for that job.
TEST_F(CliConventions, AJobNumberTooLargeOrNotPositiveIsRefused) {
  for (const char* job : {"99999999999999999999", "0", "1.5", "007"}) {
    const auto result = run_cli(std::string("status ") + job);
    EXPECT_EQ(result.exit_code, 2) << job << ": " << result.out;
    EXPECT_NE(result.out.find("is not a job number"), std::string::npos) << job << ": " << result.out;
  }
}

}  // namespace
}  // namespace cudojo

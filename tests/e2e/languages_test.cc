// The three languages through the real binary, without a GPU: starters and lessons per language,
// `cudojo build` (Numba and rustc in their sandbox) and `cudojo check --build`, and the usage
// errors a learner meets. On a GPU machine the checks are accepted instead of no_device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compile/sandbox.h"
#include "run_cli.h"

namespace cudojo {
namespace {

using testing::run_cli;
using testing::source_root;
using testing::submission;

std::string course_file(const std::string& relative) {
  return (source_root() / "course" / relative).string();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("cudojo-lang-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class Languages : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_bubblewrap().empty())
      GTEST_SKIP() << "bubblewrap is not installed (scripts/setup.sh installs it)";
  }
};

TEST(CliLanguages, StarterInEachLanguage) {
  auto python = run_cli("starter reduction/3 --lang python");
  ASSERT_EQ(python.exit_code, 0) << python.out;
  EXPECT_NE(python.out.find("cuda.jit"), std::string::npos);
  auto rust = run_cli("starter reduction/3 --lang rust");
  ASSERT_EQ(rust.exit_code, 0) << rust.out;
  EXPECT_NE(rust.out.find("fn reduce"), std::string::npos);
  auto unknown = run_cli("starter reduction/3 --lang fortran");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("cuda, python, rust"), std::string::npos) << unknown.out;
}

TEST(CliLanguages, ShowGivesTheSignatureAndNotesOfTheLanguage) {
  auto rust = run_cli("show reduction/3 --lang rust");
  ASSERT_EQ(rust.exit_code, 0) << rust.out;
  EXPECT_NE(rust.out.find("fn reduce(x: *const f32, out: *mut f32, n: i32)"), std::string::npos) << rust.out;
  EXPECT_NE(rust.out.find("sync_threads"), std::string::npos) << "the Rust notes name the prelude's barrier";
  EXPECT_NE(rust.out.find("cudojo starter reduction/3 --lang rust > mine.rs"), std::string::npos);
  auto python = run_cli("show reduction/3 --lang python --json");
  ASSERT_EQ(python.exit_code, 0) << python.out;
  const auto description = nlohmann::json::parse(python.out);
  EXPECT_NE(description["starter"].get<std::string>().find("cuda.jit"), std::string::npos);
  EXPECT_EQ(description["languages"].size(), 3u);
}

TEST(CliLanguages, AFileOfNoKnownLanguageIsAUsageError) {
  const std::string path = temp_path("mine.txt");
  std::ofstream(path) << "anything";
  auto result = run_cli("check reduction/3 " + path);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("--lang"), std::string::npos) << result.out;
  std::filesystem::remove(path);
}

TEST_F(Languages, BuildThenCheckTheBuildForPythonAndRust) {
  for (const std::string extension : {"py", "rs"}) {
    const std::string build = temp_path("reference." + extension + ".build");
    auto built = run_cli("build reduction/3 " +
                         course_file("reduction/03-block-tree/reference." + extension) + " -o " + build);
    ASSERT_EQ(built.exit_code, 0) << built.out;
    EXPECT_NE(built.out.find("check reduction/3 --build"), std::string::npos) << built.out;
    const auto file = read_json(build);
    EXPECT_EQ(file["language"], extension == "py" ? "python" : "rust");
    EXPECT_EQ(file["submission"]["format"], "ptx");
    EXPECT_EQ(file["submission"]["abi"], extension == "py" ? "numba_arrays" : "plain");
    EXPECT_FALSE(file["counted"].is_null()) << "the barrier check's build is made from the PTX";

    auto checked = run_cli("check reduction/3 --build " + build + " --json --no-sanitize");
    const auto report = nlohmann::json::parse(checked.out);
    EXPECT_EQ(report["language"], file["language"]);
    EXPECT_TRUE(report["compile"]["ok"]);
    // No GPU here: the build loads nowhere. With one, the reference is accepted.
    EXPECT_TRUE(report["verdict"] == "no_device" || report["verdict"] == "accepted") << report["verdict"];
    auto other_stage = run_cli("check reduction/4 --build " + build);
    EXPECT_EQ(other_stage.exit_code, 2);
    EXPECT_NE(other_stage.out.find("was built for reduction/3"), std::string::npos) << other_stage.out;
    std::filesystem::remove(build);
  }
}

// A build file always holds a kernel a GPU machine can run: a compile error is shown here, at its
// line, and nothing is written.
TEST_F(Languages, ACompileErrorIsShownAtItsLineAndNoBuildIsWritten) {
  const std::string build = temp_path("compile_error.rs.build");
  std::filesystem::remove(build);
  auto built = run_cli("build reduction/2 " + submission("reduction-2/compile_error.rs") + " -o " + build);
  EXPECT_EQ(built.exit_code, 1) << built.out;
  EXPECT_NE(built.out.find("compile_error.rs:7"), std::string::npos) << built.out;
  EXPECT_FALSE(std::filesystem::exists(build));
}

TEST_F(Languages, HostileFilesAreCompileErrorsThatLeakNothing) {
  for (const std::string file : {"reduction-2/host_import.py", "reduction-2/include_host_file.rs"}) {
    auto checked = run_cli("check reduction/2 " + submission(file) + " --json");
    EXPECT_EQ(checked.exit_code, 1) << checked.out;
    EXPECT_EQ(nlohmann::json::parse(checked.out)["verdict"], "compile_error") << file;
    EXPECT_EQ(checked.out.find("root:"), std::string::npos) << file;
  }
}

TEST_F(Languages, ADamagedBuildFileIsAUsageError) {
  const std::string path = temp_path("damaged.build");
  std::ofstream(path) << R"({"cudojo_build": 2, "stage": "reduction/3"})";
  auto result = run_cli("check reduction/3 --build " + path);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("damaged"), std::string::npos) << result.out;
  // A file of the format before the check build carried warp counters: made again, not trusted.
  std::ofstream(path) << R"({"cudojo_build": 1, "stage": "reduction/3"})";
  result = run_cli("check reduction/3 --build " + path);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("build it again with `cudojo build`"), std::string::npos) << result.out;
  std::ofstream(path) << "not json";
  result = run_cli("check reduction/3 --build " + path);
  EXPECT_EQ(result.exit_code, 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cudojo

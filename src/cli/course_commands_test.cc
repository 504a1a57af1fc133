// The course author's commands, run as the real binary on a copy of the shipped course: each kind
// of broken stage found with the message its author needs, the other stages still working, and a
// stage scaffolded on every contract passing `course check` at once. No GPU needed.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../../tests/e2e/run_cli.h"
#include "stage/contract_info.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

class CourseCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("cudojo_course_" + std::to_string(::getpid()) + "_" + test->name()) /
            "course";
    fs::remove_all(root_.parent_path());
    fs::create_directories(root_);
    fs::copy(testing::source_root() / "course", root_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(root_.parent_path()); }

  testing::CliResult cli(const std::string& arguments) {
    return run_cli("--course " + root_.string() + " " + arguments);
  }
  void append(const std::string& file, const std::string& text) {
    std::ofstream(root_ / file, std::ios::app) << text;
  }
  static int count_lines(const fs::path& file) {
    std::ifstream in(file);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }
  // The JSON object a --json command printed (after anything it said on stderr).
  static nlohmann::json json_of(const testing::CliResult& result) {
    return nlohmann::json::parse(result.out.substr(result.out.find('{')));
  }
  fs::path root_;
};

TEST_F(CourseCopy, ALessonsBrokenLinkMathDiagramAndFenceAreReportedAtTheirLines) {
  const fs::path lesson = root_ / "reduction/01-race/lesson.md";
  const int end = count_lines(lesson);
  append("reduction/01-race/lesson.md",
         "\nSee [the notes](notes.md) and the [Python page](../../languages/python.md).\n"  // end + 2
         "\n$$x + y\n\n"                                                                    // end + 4
         "```diagram\nno-such-diagram\n```\n\n"                                             // end + 6
         "```\nplain code\n```\n");                                                         // end + 10
  const auto result = run_cli("course check reduction/1 --course " + root_.string());
  EXPECT_EQ(result.exit_code, 1) << result.out;
  const std::string at = "course/reduction/01-race/lesson.md:";
  EXPECT_NE(result.out.find(at + std::to_string(end + 2) + ": link to 'notes.md' goes nowhere: " +
                            (root_ / "reduction/01-race/notes.md").string() + " does not exist"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("python.md' goes nowhere"), std::string::npos) << "a link that resolves is fine";
  EXPECT_NE(result.out.find(at + std::to_string(end + 4) +
                            ": $$ opens math that its paragraph never closes with $$: the page shows the "
                            "formula as plain text"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find(
                at + std::to_string(end + 7) +
                ": diagram 'no-such-diagram' is not one the page draws (it draws: privatized-histogram, "
                "tree-fold, two-pass, warp-shuffle)"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find(at + std::to_string(end + 10) + ": code fence without a language"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("FAILED  reduction/1"), std::string::npos);
  EXPECT_NE(result.out.find("4 errors"), std::string::npos) << result.out;
}

// Balanced in the source, but markdown reads *b* as emphasis and the page's typesetting sees
// "$$a" and "c$$" in two pieces of text.
TEST_F(CourseCopy, AFormulaCutByEmphasisIsReportedAtItsLine) {
  const int end = count_lines(root_ / "reduction/01-race/lesson.md");
  append("reduction/01-race/lesson.md", "\nThe product $$a*b*c$$ and the sum \\\\(x_1 + x_2\\\\).\n");
  const auto result = run_cli("course check reduction/1 --course " + root_.string());
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("lesson.md:" + std::to_string(end + 2) +
                            ": the formula at '$$a' is cut in two on the page: markdown read an _ or * in it "
                            "as emphasis"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("1 error"), std::string::npos) << "x_1 + x_2 is no emphasis: " << result.out;
}

// A figure the server does not know would show to learners as "{{ref.median}}": refused at its line;
// the figures it knows pass.
TEST_F(CourseCopy, AnUnknownLessonFigureIsReportedAtItsLine) {
  const int end = count_lines(root_ / "reduction/01-race/lesson.md");
  append("reduction/01-race/lesson.md", "\nOn the {{gpu}}: {{ref.median}} ms.\n");
  const auto result = run_cli("course check reduction/1 --course " + root_.string());
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("lesson.md:" + std::to_string(end + 2) +
                            ": {{ref.median}} is no figure the server fills"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("1 error"), std::string::npos) << "{{gpu}} is a figure: " << result.out;
}

TEST_F(CourseCopy, AStarterWhoseSignatureDiffersFailsToCompileAtItsLine) {
  std::ofstream(root_ / "reduction/01-race/starter.py")
      << "from numba import cuda\n\n\n@cuda.jit\ndef count(c, extra):\n    cuda.atomic.add(c, 0, 1)\n";
  std::ofstream(root_ / "reduction/01-race/starter.cu")
      << "// a comment\n__global__ void count(float* c) {}\n";
  const auto result = run_cli("course check reduction/1 --json --course " + root_.string());
  EXPECT_EQ(result.exit_code, 1) << result.out;
  const auto report = json_of(result);
  EXPECT_FALSE(report["ok"]);
  std::map<std::string, nlohmann::json> by_file;
  for (const auto& problem : report["stages"][0]["problems"]) by_file[problem["file"]] = problem;
  ASSERT_TRUE(by_file.contains("reduction/01-race/starter.py")) << result.out;
  ASSERT_TRUE(by_file.contains("reduction/01-race/starter.cu")) << result.out;
  EXPECT_EQ(by_file["reduction/01-race/starter.py"]["check"], "compile");
  EXPECT_EQ(by_file["reduction/01-race/starter.py"]["line"], 5) << result.out;
  EXPECT_EQ(by_file["reduction/01-race/starter.cu"]["line"], 2) << result.out;
  EXPECT_NE(by_file["reduction/01-race/starter.cu"]["message"].get<std::string>().find(
                "count is declared as void(float*); the stage launches `__global__ void count(int* c)`"),
            std::string::npos);
  EXPECT_NE(by_file["reduction/01-race/starter.py"]["message"].get<std::string>().find(
                "`count` takes (c, extra); the stage launches `count(c)`"),
            std::string::npos);
  int failed = 0;
  for (const auto& compiled : report["stages"][0]["compiled"]) failed += compiled["ok"] ? 0 : 1;
  EXPECT_EQ(failed, 2);
}

TEST_F(CourseCopy, ABrokenStageIsReportedAndTheOthersStillWork) {
  append("reduction/02-atomic-sum/stage.toml", "\n[tests]\n");  // a table defined twice: a syntax error
  int rnus_line = 0;
  {
    std::ifstream in(root_ / "reduction/03-block-tree/stage.toml");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("runs = 5"), 8, "rnus = 5");
    rnus_line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + text.find("rnus"), '\n'));
    std::ofstream(root_ / "reduction/03-block-tree/stage.toml") << text;
  }
  fs::remove(root_ / "atomics/01-histogram-global/reference.cu");

  const auto listed = cli("stages");
  EXPECT_EQ(listed.exit_code, 0) << listed.out;
  // The good stages first, then the broken ones with their reasons.
  EXPECT_LT(listed.out.find("atomics/3"), listed.out.find("BROKEN")) << listed.out;
  EXPECT_NE(listed.out.find("reduction/block-tree"), std::string::npos);
  EXPECT_NE(listed.out.find("unknown key 'rnus' in [tests]; did you mean 'runs'?"), std::string::npos);
  const auto list = nlohmann::json::parse(cli("stages --json").out);
  ASSERT_EQ(list.size(), 12u);
  EXPECT_EQ(list[8]["id"], "atomics/3");
  EXPECT_FALSE(list[8].contains("broken"));
  for (std::size_t k = 9; k < 12; ++k) EXPECT_EQ(list[k]["broken"], true) << list[k].dump();
  EXPECT_EQ(list[9]["id"], "reduction/2");

  const auto shown = cli("show reduction/block-tree");
  EXPECT_EQ(shown.exit_code, 2);
  EXPECT_NE(shown.out.find("reduction/3 is broken, so it cannot be used until its files are fixed"),
            std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("03-block-tree/stage.toml:" + std::to_string(rnus_line) +
                           ": unknown key 'rnus' in [tests]; did you mean 'runs'?"),
            std::string::npos)
      << shown.out;
  const auto shown_json = json_of(cli("show reduction/3 --json"));
  EXPECT_EQ(shown_json["kind"], "course_error");
  EXPECT_NE(cli("starter atomics/1").out.find("reference.cu is missing"), std::string::npos);

  EXPECT_EQ(cli("show reduction/4").exit_code, 0);
  const auto starter = cli("starter reduction/1");
  EXPECT_EQ(starter.exit_code, 0);
  EXPECT_NE(starter.out.find("__global__ void count"), std::string::npos);

  const auto checked = run_cli("course check reduction/3 atomics/1 --json --course " + root_.string());
  EXPECT_EQ(checked.exit_code, 1);
  const auto report = json_of(checked);
  ASSERT_EQ(report["stages"].size(), 2u);
  EXPECT_TRUE(report["stages"][0]["broken"]);
  EXPECT_EQ(report["stages"][0]["problems"][0]["check"], "stage_file");
  EXPECT_EQ(report["stages"][0]["problems"][0]["key"], "tests.rnus");
  EXPECT_EQ(report["stages"][1]["problems"][0]["check"], "missing_file");
  EXPECT_TRUE(report["stages"][1]["compiled"].empty());
}

TEST_F(CourseCopy, ABrokenCourseFileStopsEveryCommandSayingWhere) {
  std::ofstream(root_ / "course.toml") << "tracks = [\"reduction\", \"atomics\"]\norder = 1\n";
  const auto shown = cli("show reduction/1");
  EXPECT_EQ(shown.exit_code, 2);
  EXPECT_NE(shown.out.find("course.toml:2: unknown key 'order' at the top of the file"), std::string::npos)
      << shown.out;
  const auto checked = run_cli("course check --course " + root_.string());
  EXPECT_EQ(checked.exit_code, 1);
  EXPECT_NE(checked.out.find("course.toml:2: unknown key 'order'"), std::string::npos) << checked.out;
}

TEST_F(CourseCopy, StageNewScaffoldsEveryContractAndEachPassesCourseCheck) {
  std::vector<std::string> ids;
  int number = 0;
  for (const auto& contract : all_contracts()) {
    const std::string id = "scaffold/" + std::to_string(++number);
    const auto made = run_cli("stage new " + id + " --contract " + std::string(contract.name) + " --course " +
                              root_.string());
    ASSERT_EQ(made.exit_code, 0) << made.out;
    EXPECT_NE(made.out.find("places say TODO(author)"), std::string::npos) << made.out;
    ids.push_back(id);
  }
  EXPECT_TRUE(fs::exists(root_ / "scaffold/04-two-kernel-sum/reference.rs"));
  std::string wanted;
  for (const auto& id : ids) wanted += " " + id;
  const auto result = run_cli("course check" + wanted + " --json --course " + root_.string());
  EXPECT_EQ(result.exit_code, 0) << result.out;
  const auto report = json_of(result);
  EXPECT_TRUE(report["ok"]);
  EXPECT_EQ(report["summary"]["broken"], 0);
  EXPECT_EQ(report["summary"]["errors"], 0);
  EXPECT_GT(report["summary"]["todo_markers"], 0);
  EXPECT_EQ(report["summary"]["warnings"], report["summary"]["todo_markers"]);
  const int languages = 3 - static_cast<int>(report["skipped"].size());
  EXPECT_EQ(report["summary"]["compiled"], static_cast<int>(ids.size()) * 2 * languages);
  for (const auto& stage : report["stages"]) {
    for (const auto& problem : stage["problems"]) EXPECT_EQ(problem["check"], "todo") << problem.dump();
    EXPECT_EQ(stage["expect_starter"], "wrong_answer");
  }
  // The new stages are stages like the others.
  const auto shown = cli("show scaffold/2");
  EXPECT_EQ(shown.exit_code, 0) << shown.out;
  EXPECT_NE(shown.out.find("__global__ void reduce(const float* X, float* out, int N)"), std::string::npos);
}

TEST_F(CourseCopy, StageNewRefusesWhatIsTakenAndListsTheContracts) {
  const auto taken = run_cli("stage new reduction/3 --contract counter --course " + root_.string());
  EXPECT_EQ(taken.exit_code, 2);
  EXPECT_NE(taken.out.find("reduction/3 is taken by"), std::string::npos) << taken.out;
  const auto alias =
      run_cli("stage new reduction/20 --contract counter --slug block-tree --course " + root_.string());
  EXPECT_EQ(alias.exit_code, 2);
  EXPECT_NE(alias.out.find("reduction/block-tree is taken by"), std::string::npos) << alias.out;
  fs::create_directories(root_ / "reduction/21-counter");
  const auto folder = run_cli("stage new reduction/21 --contract counter --course " + root_.string());
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.out.find("21-counter"), std::string::npos) << folder.out;
  const auto wrong = run_cli("stage new reduction/22 --contract fastest_sum --course " + root_.string());
  EXPECT_EQ(wrong.exit_code, 2);
  const auto help = run_cli("stage new --help");
  for (const auto& contract : all_contracts()) {
    EXPECT_NE(wrong.out.find("  " + std::string(contract.name) + " "), std::string::npos) << wrong.out;
    EXPECT_NE(help.out.find(std::string(contract.name)), std::string::npos) << help.out;
  }
  EXPECT_FALSE(fs::exists(root_ / "reduction/22-fastest-sum"));
}

TEST_F(CourseCopy, CourseCheckUsageErrors) {
  const auto unknown = run_cli("course check reduction/99 --course " + root_.string());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("no stage 'reduction/99'"), std::string::npos) << unknown.out;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) GTEST_SKIP() << "a GPU is present";
  const auto gpu = run_cli("course check reduction/1 --gpu --course " + root_.string());
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.out.find(
                "course check --gpu judges every reference and starter on a GPU, and this machine has none"),
            std::string::npos)
      << gpu.out;
}

}  // namespace
}  // namespace cudojo

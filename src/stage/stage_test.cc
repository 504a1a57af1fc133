#include "stage/stage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/limits.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;

class TempStage : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fs::path("cudojo_stage_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    dir_ = root_ / "reduction" / "09-made-up";
    fs::create_directories(dir_);
    write("lesson.md", "# lesson\n");
    write("starter.cu", "__global__ void reduce(const float* X, float* out, int N) {}\n");
    write("reference.cu", "__global__ void reduce(const float* X, float* out, int N) {}\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  void write_stage(const std::string& extra_launch = "", const std::string& gate = "rule = \"correctness\"") {
    write("stage.toml",
          "id = \"reduction/9\"\nslug = \"made-up\"\ntitle = \"t\"\nsummary = \"s\"\n"
          "contract = \"one_accumulator\"\nkernel = \"reduce\"\n"
          "[launch]\nthreads_per_block = 256\ndynamic_shared_bytes = 1024\n" +
              extra_launch +
              "[tests]\nsizes = [1, 257]\ndata = [\"exact\", \"random_signed\"]\n"
              "performance_size = 1024\nruns = 3\n[gate]\n" +
              gate + "\n");
  }
  fs::path root_, dir_;
};

TEST_F(TempStage, LoadsEveryField) {
  write_stage("", "rule = \"time_ratio\"\nmax_time_ratio = 1.5");
  Stage stage = load_stage(dir_);
  EXPECT_EQ(stage.id, "reduction/9");
  EXPECT_EQ(stage.slug_id(), "reduction/made-up");
  EXPECT_EQ(stage.contract, "one_accumulator");
  EXPECT_EQ(stage.launch.dynamic_shared_bytes, 1024);
  EXPECT_FALSE(stage.launch.fixed_blocks.has_value());
  EXPECT_EQ(stage.test_sizes, (std::vector<std::int64_t>{1, 257}));
  EXPECT_EQ(stage.gate.rule, GateRule::kTimeRatio);
  EXPECT_DOUBLE_EQ(stage.gate.max_time_ratio, 1.5);
  EXPECT_EQ(stage.lesson_markdown, "# lesson\n");
}

TEST_F(TempStage, UnknownContractIsRefusedWithTheFileName) {
  write_stage();
  std::ifstream in(dir_ / "stage.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text.replace(text.find("one_accumulator"), 15, "two_accumulator");
  write("stage.toml", text);
  try {
    load_stage(dir_);
    FAIL() << "expected StageError";
  } catch (const StageError& error) {
    EXPECT_NE(std::string(error.what()).find("two_accumulator"), std::string::npos);
    EXPECT_NE(std::string(error.what()).find("stage.toml"), std::string::npos);
  }
}

TEST_F(TempStage, ThreadsPerBlockMustBeWholeWarps) {
  write("stage.toml",
        "id = \"reduction/9\"\nslug = \"m\"\ntitle = \"t\"\nsummary = \"s\"\n"
        "contract = \"one_accumulator\"\nkernel = \"reduce\"\n[launch]\nthreads_per_block = 100\n"
        "[tests]\nsizes = [1]\ndata = [\"exact\"]\nperformance_size = 1\n");
  EXPECT_THROW(load_stage(dir_), StageError);
}

TEST_F(TempStage, SizesAndRunsStayWithinTheLimitsTable) {
  auto stage_with = [](const std::string& tests) {
    return "id = \"reduction/9\"\nslug = \"m\"\ntitle = \"t\"\nsummary = \"s\"\n"
           "contract = \"one_accumulator\"\nkernel = \"reduce\"\n[launch]\nthreads_per_block = 256\n"
           "[tests]\ndata = [\"exact\"]\n" +
           tests;
  };
  const std::string too_big = std::to_string(kStageBounds.max_size + 1);
  for (const std::string& tests : std::vector<std::string>{
           "sizes = [" + too_big + "]\nperformance_size = 1\n",
           "sizes = [1]\nperformance_size = " + too_big + "\n",
           "sizes = [1]\nperformance_size = 1\nruns = " + std::to_string(kStageBounds.max_runs + 1) + "\n",
           "sizes = [1]\nperformance_size = 1\nruns = 1\n"}) {
    write("stage.toml", stage_with(tests));
    EXPECT_THROW(load_stage(dir_), StageError) << tests;
  }
  write("stage.toml",
        stage_with("sizes = [1]\nperformance_size = " + std::to_string(kStageBounds.max_size) + "\n"));
  EXPECT_NO_THROW(load_stage(dir_));
}

TEST_F(TempStage, SyntaxErrorNamesTheLine) {
  write("stage.toml", "id = \"reduction/9\"\nslug = = \"m\"\n");
  try {
    load_stage(dir_);
    FAIL();
  } catch (const StageError& error) {
    EXPECT_NE(std::string(error.what()).find(":2:"), std::string::npos) << error.what();
  }
}

TEST_F(TempStage, JsonRoundTripKeepsTheDriverFields) {
  write_stage("blocks = 7\n");
  Stage stage = load_stage(dir_);
  Stage back = nlohmann::json(stage).get<Stage>();
  EXPECT_EQ(back.id, stage.id);
  EXPECT_EQ(back.launch.fixed_blocks, std::optional<int>(7));
  EXPECT_EQ(back.test_sizes, stage.test_sizes);
  EXPECT_EQ(back.data_sets, stage.data_sets);
  EXPECT_EQ(back.runs, 3);
}

TEST(Course, ShippedTrackHasFourStagesInOrderWithAliases) {
  auto course = load_course(CUDOJO_COURSE_DIR);
  ASSERT_EQ(course.size(), 4u);
  EXPECT_EQ(course[0].id, "reduction/1");
  EXPECT_EQ(course[3].id, "reduction/4");
  const Stage* by_alias = find_stage(course, "reduction/block-tree");
  ASSERT_NE(by_alias, nullptr);
  EXPECT_EQ(by_alias->id, "reduction/3");
  EXPECT_EQ(find_stage(course, "reduction/99"), nullptr);
  // The facts the seeds fix: 256 threads, 1024 shared bytes, N = 4,194,304; the counter 4096 x 256.
  EXPECT_EQ(course[0].launch.fixed_blocks, std::optional<int>(4096));
  for (int s = 1; s < 4; ++s) {
    EXPECT_EQ(course[s].launch.threads_per_block, 256);
    EXPECT_EQ(course[s].launch.dynamic_shared_bytes, 1024);
    EXPECT_EQ(course[s].performance_size, 4194304);
    EXPECT_EQ(course[s].test_sizes.size(), 9u);
  }
  EXPECT_EQ(course[1].gate.rule, GateRule::kCorrectness);
  EXPECT_EQ(course[2].gate.rule, GateRule::kTimeRatio);
  EXPECT_EQ(course[3].contract, "partial_per_block");
}

TEST(Course, MissingFolderSaysHowToPointAtOne) {
  try {
    load_course("/nonexistent/cudojo/course");
    FAIL();
  } catch (const StageError& error) {
    EXPECT_NE(std::string(error.what()).find("--course"), std::string::npos);
  }
}

}  // namespace
}  // namespace cudojo

namespace cudojo {
namespace {

TEST(Course, EveryStageHasAStarterAndAReferenceInEachLanguage) {
  for (const Stage& stage : load_course(CUDOJO_COURSE_DIR)) {
    for (const Language language : all_languages()) {
      const std::string* starter = stage.starter(language);
      const std::string* reference = stage.reference(language);
      ASSERT_NE(starter, nullptr) << stage.id << " has no " << display_name(language) << " starter";
      ASSERT_NE(reference, nullptr) << stage.id << " has no " << display_name(language) << " reference";
      // Each names the stage's kernel, so a learner who starts there writes the right entry.
      EXPECT_NE(starter->find(stage.kernel), std::string::npos) << stage.id << " " << to_string(language);
      EXPECT_NE(reference->find(stage.kernel), std::string::npos) << stage.id << " " << to_string(language);
    }
  }
}

TEST(Language, NamesExtensionsAndAliases) {
  EXPECT_EQ(parse_language("python"), Language::kPython);
  EXPECT_EQ(parse_language("RS"), Language::kRust);
  EXPECT_EQ(parse_language("c++"), Language::kCuda);
  EXPECT_EQ(parse_language("fortran"), std::nullopt);
  EXPECT_EQ(language_from_path("dir/mine.py"), Language::kPython);
  EXPECT_EQ(language_from_path("mine.rs"), Language::kRust);
  EXPECT_EQ(language_from_path("mine.cuh"), Language::kCuda);
  EXPECT_EQ(language_from_path("mine.txt"), std::nullopt);
  for (const Language language : all_languages()) {
    EXPECT_EQ(parse_language(to_string(language)), language);
    EXPECT_EQ(language_from_path("x" + std::string(source_extension(language))), language);
  }
}

TEST(Language, SignaturesReadAsEachLanguageWritesThem) {
  const auto course = load_course(CUDOJO_COURSE_DIR);
  const Stage& stage = *find_stage(course, "reduction/3");
  EXPECT_EQ(describe_signature(stage), "__global__ void reduce(const float* X, float* out, int N)");
  EXPECT_EQ(describe_signature(stage, Language::kPython),
            "@cuda.jit def reduce(X, out, N):  # X float32[::1] (read only), out float32[::1], N int32");
  EXPECT_EQ(describe_signature(stage, Language::kRust),
            "#[no_mangle] pub unsafe extern \"ptx-kernel\" fn reduce(x: *const f32, out: *mut f32, n: i32)");
  EXPECT_EQ(describe_signature(*find_stage(course, "reduction/1"), Language::kRust),
            "#[no_mangle] pub unsafe extern \"ptx-kernel\" fn count(c: *mut i32)");
}

}  // namespace
}  // namespace cudojo

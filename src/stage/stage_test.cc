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

TEST(Course, ShippedCourseHasTwelveStagesOverTwoTracksInOrder) {
  auto course = load_course(CUDOJO_COURSE_DIR);
  ASSERT_EQ(course.size(), 12u);
  // course.toml puts reduction first; within a track, folder order.
  for (int s = 0; s < 9; ++s) EXPECT_EQ(course[s].id, "reduction/" + std::to_string(s + 1));
  for (int s = 0; s < 3; ++s) EXPECT_EQ(course[9 + s].id, "atomics/" + std::to_string(s + 1));
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
  // The stages: CUB in the same run at 2^26 (<= 1.25x), 20 deterministic runs (<= 1.5x
  // CUB), a precision bound, 64-bit totals, histograms on a fixed grid, a float max.
  const Stage& memory_speed = *find_stage(course, "reduction/memory-speed");
  EXPECT_EQ(memory_speed.gate.rule, GateRule::kBaselineRatio);
  EXPECT_EQ(memory_speed.gate.baseline, "cub_reduce");
  EXPECT_DOUBLE_EQ(memory_speed.gate.max_time_ratio, 1.25);
  EXPECT_EQ(memory_speed.performance_size, 1 << 26);
  EXPECT_TRUE(memory_speed.launch.blocks_per_sm.has_value());
  const Stage& deterministic = *find_stage(course, "reduction/deterministic");
  EXPECT_EQ(deterministic.contract, "two_kernel_sum");
  EXPECT_FALSE(deterministic.second_kernel.empty());
  EXPECT_TRUE(deterministic.deterministic);
  EXPECT_EQ(deterministic.runs, 20);
  EXPECT_DOUBLE_EQ(deterministic.gate.max_time_ratio, 1.5);
  EXPECT_TRUE(find_stage(course, "reduction/precision")->max_relative_error.has_value());
  EXPECT_EQ(find_stage(course, "reduction/overflow")->contract, "u64_sum");
  EXPECT_EQ(find_stage(course, "atomics/histogram-global")->contract, "histogram");
  EXPECT_TRUE(find_stage(course, "atomics/histogram-private")->launch.blocks_per_sm.has_value());
  EXPECT_EQ(find_stage(course, "atomics/cas-max")->contract, "float_max");
}

TEST_F(TempStage, NewFieldsLoadAndTravelAsJson) {
  for (const char* name : {"starter.cu", "reference.cu"}) {
    write(name,
          "__global__ void partials(const float* X, float* partial, int N) {}\n"
          "__global__ void fold(const float* partial, float* out, int count) {}\n");
  }
  write("stage.toml",
        "id = \"reduction/9\"\nslug = \"made-up\"\ntitle = \"t\"\nsummary = \"s\"\n"
        "contract = \"two_kernel_sum\"\nkernel = \"partials\"\nsecond_kernel = \"fold\"\n"
        "[launch]\nthreads_per_block = 256\nblocks_per_sm = 4\n"
        "[tests]\nsizes = [1, 257]\ndata = [\"exact\", \"tenths\"]\nperformance_size = 1024\nruns = 20\n"
        "deterministic = true\nmax_relative_error = 1e-4\ntiming_data = \"exact\"\n"
        "[gate]\nrule = \"baseline_ratio\"\nbaseline = \"cub_reduce\"\nmax_time_ratio = 1.5\n");
  const Stage stage = load_stage(dir_);
  EXPECT_EQ(stage.second_kernel, "fold");
  EXPECT_EQ(stage.launch.blocks_per_sm, std::optional<int>(4));
  EXPECT_TRUE(stage.deterministic);
  EXPECT_EQ(stage.max_relative_error, std::optional<double>(1e-4));
  EXPECT_EQ(stage.gate.rule, GateRule::kBaselineRatio);
  EXPECT_NE(describe_launch(stage).find("4 blocks per SM"), std::string::npos);
  EXPECT_NE(describe_launch(stage).find("then fold on 1 block"), std::string::npos);
  EXPECT_NE(describe_signature(stage).find(
                "; then __global__ void fold(const float* partial, float* out, int count)"),
            std::string::npos);
  EXPECT_NE(describe_gate(stage).find("CUB"), std::string::npos);
  const Stage back = nlohmann::json(stage).get<Stage>();
  EXPECT_EQ(back.second_kernel, "fold");
  EXPECT_EQ(back.launch.blocks_per_sm, std::optional<int>(4));
  EXPECT_TRUE(back.deterministic);
  EXPECT_EQ(back.max_relative_error, std::optional<double>(1e-4));
  EXPECT_EQ(back.timing_data, "exact");
  EXPECT_EQ(back.gate.rule, GateRule::kBaselineRatio);
  EXPECT_EQ(back.gate.baseline, "cub_reduce");
}

TEST_F(TempStage, ContractMismatchesAreRefusedWithTheReason) {
  for (const char* name : {"starter.cu", "reference.cu"}) write(name, "__global__ void k(int* c) {}\n");
  auto refused = [&](const std::string& contract, const std::string& extra, const std::string& data,
                     const std::string& gate) {
    write("stage.toml",
          "id = \"reduction/9\"\nslug = \"made-up\"\ntitle = \"t\"\nsummary = \"s\"\n"
          "contract = \"" +
              contract + "\"\nkernel = \"k\"\n" + extra +
              "[launch]\nthreads_per_block = 256\n"
              "[tests]\nsizes = [1]\ndata = [" +
              data +
              "]\nperformance_size = 1024\n"
              "[gate]\n" +
              gate + "\n");
    try {
      load_stage(dir_);
    } catch (const StageError& error) {
      return std::string(error.what());
    }
    return std::string("(loaded)");
  };
  EXPECT_NE(refused("two_kernel_sum", "", "\"exact\"", "").find("second_kernel"), std::string::npos);
  EXPECT_NE(refused("u64_sum", "second_kernel = \"k2\"\n", "\"bytes\"", "").find("remove 'second_kernel'"),
            std::string::npos);
  EXPECT_NE(refused("histogram", "", "\"exact\"", "").find("unknown data set 'exact' for the histogram"),
            std::string::npos);
  EXPECT_NE(refused("one_accumulator", "", "\"tenths\"", "").find("must include 'exact'"), std::string::npos);
  EXPECT_NE(refused("histogram", "", "\"spread\"", "rule = \"baseline_ratio\"\nbaseline = \"cub_reduce\"")
                .find("float-sum"),
            std::string::npos);
  EXPECT_NE(refused("histogram", "", "\"spread\"", "rule = \"fastest\"").find("baseline_ratio"),
            std::string::npos);
  EXPECT_EQ(refused("histogram", "", "\"spread\", \"one_bin\"", "rule = \"correctness\""), "(loaded)");
}

TEST(Course, TracksFollowCourseTomlThenTheirNames) {
  const fs::path root = fs::temp_directory_path() / ("cudojo_course_order_" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const std::string track : {"alpha", "zeta"}) {
    const fs::path dir = root / track / "01-one";
    fs::create_directories(dir);
    std::ofstream(dir / "stage.toml") << "id = \"" << track << "/1\"\nslug = \"one\"\ntitle = \"t\"\n"
                                      << "summary = \"s\"\ncontract = \"counter\"\nkernel = \"count\"\n"
                                      << "[launch]\nthreads_per_block = 256\nblocks = 4\n";
    std::ofstream(dir / "lesson.md") << "x\n";
    for (const char* name : {"starter.cu", "reference.cu"})
      std::ofstream(dir / name) << "__global__ void count(int* c) {}\n";
  }
  EXPECT_EQ(load_course(root).front().id, "alpha/1");
  std::ofstream(root / "course.toml") << "tracks = [\"zeta\", \"alpha\"]\n";
  EXPECT_EQ(load_course(root).front().id, "zeta/1");
  std::ofstream(root / "course.toml") << "tracks = [\n";
  EXPECT_THROW(load_course(root), StageError);
  fs::remove_all(root);
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
            "#[kernel] fn reduce(x: *const f32, out: *mut f32, n: i32)");
  EXPECT_EQ(describe_signature(*find_stage(course, "reduction/1"), Language::kRust),
            "#[kernel] fn count(c: *mut i32)");
}

}  // namespace
}  // namespace cudojo

// One test per kind of broken stage, each against the message a course author needs: the file, the
// line, the key, and what to write instead.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "stage/stage.h"
#include "stage/stage_schema.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;

// A course of one track holding one good stage (reduction/1, a counter); tests add or break others.
class Authoring : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cudojo_authoring_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    add_stage("reduction/01-count", counter_file("reduction/1", "count"));
  }
  void TearDown() override { fs::remove_all(root_); }

  static std::string counter_file(const std::string& id, const std::string& slug,
                                  const std::string& tests = "") {
    return "id = \"" + id + "\"\nslug = \"" + slug +
           "\"\ntitle = \"t\"\nsummary = \"s\"\ncontract = \"counter\"\nkernel = \"count\"\n\n"
           "[launch]\nblocks = 64\nthreads_per_block = 256\n\n[tests]\nruns = 5\n" +
           tests;
  }
  fs::path add_stage(const std::string& folder, const std::string& stage_file) {
    const fs::path dir = root_ / folder;
    fs::create_directories(dir);
    write(dir / "stage.toml", stage_file);
    write(dir / "lesson.md", "# A lesson\n");
    write(dir / "starter.cu", "// the starter\n__global__ void count(int* c) { *c += 1; }\n");
    write(dir / "reference.cu", "__global__ void count(int* c) { atomicAdd(c, 1); }\n");
    return dir;
  }
  static void write(const fs::path& file, const std::string& text) { std::ofstream(file) << text; }
  // Every problem of the stage's folder, one "file:line: message" a line, the course root cut off.
  std::string problems_of(const fs::path& dir) {
    try {
      load_stage(dir);
    } catch (const StageError& error) {
      std::string text = error.what();
      for (std::size_t at = text.find(root_.string() + "/"); at != std::string::npos;
           at = text.find(root_.string() + "/")) {
        text.erase(at, root_.string().size() + 1);
      }
      return text;
    }
    return "(loaded)";
  }
  fs::path root_;
};

TEST_F(Authoring, UnknownKeyNamesFileLineAndTheKeyMeant) {
  const fs::path dir = add_stage("reduction/02-typo", counter_file("reduction/2", "typo", "rnus = 5\n"));
  EXPECT_EQ(problems_of(dir),
            "reduction/02-typo/stage.toml:14: unknown key 'rnus' in [tests]; did you mean 'runs'?");
}

TEST_F(Authoring, MisspeltTableAndMisplacedKeyAreNamed) {
  const fs::path dir = add_stage("reduction/02-typo", "runs = 3\n" + counter_file("reduction/2", "typo") +
                                                          "\n[gates]\nrule = \"correctness\"\n");
  EXPECT_EQ(
      problems_of(dir),
      "reduction/02-typo/stage.toml:1: unknown key 'runs' at the top of the file; it belongs in [tests]\n"
      "reduction/02-typo/stage.toml:16: unknown table [gates]; did you mean [gate]?");
}

TEST_F(Authoring, WrongTypeNamesTheTypeAndTheValue) {
  std::string text = counter_file("reduction/2", "typed");
  text.replace(text.find("runs = 5"), 8, "runs = \"5\"");
  const fs::path dir = add_stage("reduction/02-typed", text);
  EXPECT_EQ(problems_of(dir),
            "reduction/02-typed/stage.toml:13: tests.runs must be an integer, not a string (\"5\")");
  write(dir / "stage.toml",
        "id = \"reduction/2\"\nslug = \"typed\"\ntitle = \"t\"\nsummary = \"s\"\ncontract = \"histogram\"\n"
        "kernel = \"count\"\n[launch]\nthreads_per_block = 256\n[tests]\nsizes = [1, \"2\"]\n"
        "data = [\"spread\"]\nperformance_size = 1.5\n[gate]\nmax_time_ratio = 2\n");
  EXPECT_EQ(
      problems_of(dir),
      "reduction/02-typed/stage.toml:10: tests.sizes must be an array of integers; this element is a "
      "string (\"2\")\n"
      "reduction/02-typed/stage.toml:12: tests.performance_size must be an integer, not a floating-point "
      "number (1.5)\n"
      "reduction/02-typed/stage.toml:14: gate.max_time_ratio has no effect with rule = \"correctness\": "
      "remove it, or set rule = \"time_ratio\"");
}

TEST_F(Authoring, MissingReferenceRsBesideItsStarter) {
  const fs::path dir = add_stage("reduction/02-rust", counter_file("reduction/2", "rust"));
  write(dir / "starter.rs", "#[kernel]\nfn count(c: *mut i32) {}\n");
  EXPECT_EQ(
      problems_of(dir),
      "reduction/02-rust/reference.rs: reference.rs is missing: starter.rs is there, and every Rust "
      "(nvptx64) starter needs its reference (`course check --gpu` proves the language can pass the stage "
      "with it); add one, or remove starter.rs");
  fs::rename(dir / "starter.rs", dir / "reference.rs");
  EXPECT_NE(
      problems_of(dir).find("reduction/02-rust/starter.rs: starter.rs is missing: reference.rs is there"),
      std::string::npos);
}

TEST_F(Authoring, MissingReferenceCu) {
  const fs::path dir = add_stage("reduction/02-plain", counter_file("reduction/2", "plain"));
  fs::remove(dir / "reference.cu");
  EXPECT_EQ(
      problems_of(dir),
      "reduction/02-plain/reference.cu: reference.cu is missing: every stage has a CUDA C++ reference, the "
      "kernel every language is timed against");
}

TEST_F(Authoring, KernelNameTheStarterDoesNotDefine) {
  const fs::path dir = add_stage("reduction/02-named", counter_file("reduction/2", "named"));
  write(dir / "starter.cu", "// the starter\n__global__ void cuont(int* c) { *c += 1; }\n");
  EXPECT_EQ(
      problems_of(dir),
      "reduction/02-named/starter.cu:2: defines no kernel 'count' (stage.toml:6: kernel = \"count\"); the "
      "kernels here: cuont (rename 'cuont', or change kernel)");
  // Defined, but not as a kernel of its language.
  write(dir / "starter.cu", "__global__ void count(int* c) {}\n");
  write(dir / "starter.py", "from numba import cuda\n\n\ndef count(c):\n    pass\n");
  write(dir / "reference.py",
        "from numba import cuda\n\n\n@cuda.jit\ndef count(c):\n    cuda.atomic.add(c, 0, 1)\n");
  EXPECT_EQ(
      problems_of(dir),
      "reduction/02-named/starter.py:4: 'count' is defined here but not as a kernel: make it a @cuda.jit "
      "function (stage.toml:6: kernel = \"count\")");
}

TEST_F(Authoring, EveryProblemOfAFolderIsReportedAtOnce) {
  std::string text = counter_file("reduction/3", "many", "rnus = 5\n");
  text.replace(text.find("blocks = 64"), 11, "blocks = -1");
  const fs::path dir = add_stage("reduction/02-many", text);
  fs::remove(dir / "lesson.md");
  const std::string problems = problems_of(dir);
  EXPECT_NE(problems.find("stage.toml:1: id 'reduction/3' says stage 3, but its folder 02-many says 2"),
            std::string::npos)
      << problems;
  EXPECT_NE(problems.find("stage.toml:9: the counter contract needs launch.blocks > 0"), std::string::npos);
  EXPECT_NE(problems.find("stage.toml:14: unknown key 'rnus'"), std::string::npos);
  EXPECT_NE(problems.find("lesson.md: lesson.md is missing"), std::string::npos);
}

TEST_F(Authoring, ABrokenStageStandsAsideAndTheOthersLoad) {
  const fs::path broken = add_stage("reduction/02-typo", counter_file("reduction/2", "typo", "rnus = 5\n"));
  add_stage("reduction/03-fine", counter_file("reduction/3", "fine"));
  const Course course = load_course_report(root_);
  ASSERT_EQ(course.stages.size(), 2u);
  EXPECT_EQ(course.stages[0].id, "reduction/1");
  EXPECT_EQ(course.stages[1].id, "reduction/3");
  ASSERT_EQ(course.broken.size(), 1u);
  EXPECT_EQ(course.broken[0].label(), "reduction/2");
  EXPECT_EQ(course.broken[0].directory, broken);
  EXPECT_NE(course.broken[0].reason().find("did you mean 'runs'?"), std::string::npos);
  // Found by id, alias and folder; the good stages by theirs.
  EXPECT_EQ(course.find_broken("reduction/typo"), &course.broken[0]);
  EXPECT_EQ(course.find_broken("reduction/02-typo"), &course.broken[0]);
  EXPECT_EQ(course.find_broken("reduction/3"), nullptr);
  EXPECT_EQ(load_course(root_).size(), 2u);
  // A stage.toml that cannot even be parsed still leaves a broken stage labelled by its folder.
  write(broken / "stage.toml", "id = \n");
  const Course again = load_course_report(root_);
  ASSERT_EQ(again.broken.size(), 1u);
  EXPECT_EQ(again.broken[0].label(), "reduction/2");
  EXPECT_EQ(again.broken[0].problems[0].line, 1);
}

TEST_F(Authoring, ACopiedFolderWithTheSameIdIsTheBrokenOne) {
  add_stage("reduction/01-zcopy", counter_file("reduction/1", "copy"));  // after 01-count
  const Course course = load_course_report(root_);
  ASSERT_EQ(course.stages.size(), 1u);
  ASSERT_EQ(course.broken.size(), 1u);
  EXPECT_EQ(course.broken[0].problems.front().line, 1);
  EXPECT_NE(course.broken[0].reason().find("id 'reduction/1' is already reduction/1's"), std::string::npos)
      << course.broken[0].reason();
}

TEST_F(Authoring, ANumberedFolderWithoutAStageFileIsBroken) {
  fs::create_directories(root_ / "reduction" / "02-empty");
  fs::create_directories(root_ / "reduction" / "images");  // not a stage: no number, no stage.toml
  const Course course = load_course_report(root_);
  ASSERT_EQ(course.broken.size(), 1u);
  EXPECT_NE(course.broken[0].reason().find("stage.toml is missing"), std::string::npos);
}

TEST_F(Authoring, ABrokenCourseFileStopsEverythingWithALine) {
  write(root_ / "course.toml", "trakcs = [\"reduction\"]\n");
  try {
    load_course_report(root_);
    FAIL() << "expected StageError";
  } catch (const StageError& error) {
    EXPECT_EQ(std::string(error.what()), (root_ / "course.toml").string() +
                                             ":1: unknown key 'trakcs' at the top of the file; did you mean "
                                             "'tracks'?");
  }
  write(root_ / "course.toml", "tracks = [\"reduction\", \"atomcis\"]\n");
  EXPECT_THROW(load_course_report(root_), StageError);
}

TEST(Schema, TheHintIsTheNearestKeyOrNone) {
  EXPECT_EQ(closest_name("rnus", {"runs", "sizes"}), "runs");
  EXPECT_EQ(closest_name("threads_per_blok", {"threads_per_block", "blocks"}), "threads_per_block");
  EXPECT_EQ(closest_name("colour", {"runs", "sizes"}), std::nullopt);
}

// docs/stages.md documents every key the reader accepts (as `table.key`), and every verdict.
TEST(Schema, EveryKeyIsDocumented) {
  std::ifstream in(fs::path(CUDOJO_COURSE_DIR).parent_path() / "docs" / "stages.md");
  ASSERT_TRUE(in) << "docs/stages.md is missing";
  std::ostringstream text;
  text << in.rdbuf();
  for (const auto keys : {stage_file_keys(), course_file_keys()}) {
    for (const KeySpec& spec : keys) {
      EXPECT_NE(text.str().find("`" + spec.qualified() + "`"), std::string::npos) << spec.qualified();
    }
  }
  for (const auto verdict : expectable_verdicts()) {
    EXPECT_NE(text.str().find(std::string(verdict)), std::string::npos) << verdict;
  }
}

TEST(Course, TheShippedCourseHasNoBrokenStageAndDeclaresEveryStarterVerdict) {
  const Course course = load_course_report(CUDOJO_COURSE_DIR);
  EXPECT_TRUE(course.broken.empty()) << (course.broken.empty() ? "" : course.broken[0].reason());
  EXPECT_EQ(course.stages.size(), 12u);
  for (const Stage& stage : course.stages) {
    EXPECT_FALSE(stage.expected_starter_verdict.empty()) << stage.id;
  }
}

}  // namespace
}  // namespace cudojo

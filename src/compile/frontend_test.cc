// The Python and Rust front ends as the judge runs them: embedded scripts, in the sandbox. Hostile
// files get compile errors that quote nothing of the host.
#include "compile/frontend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile/ptx_barriers.h"
#include "compile/sandbox.h"
#include "stage/contract_info.h"

namespace cudojo {
namespace {

std::string read_course_file(const std::string& relative) {
  std::ifstream in(std::filesystem::path(CUDOJO_COURSE_DIR) / relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class FrontendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_bubblewrap().empty())
      GTEST_SKIP() << "bubblewrap is not installed (scripts/setup.sh installs it)";
  }
  static FrontendResult compile(Language language, const std::string& source,
                                std::chrono::milliseconds limit = std::chrono::seconds(120)) {
    FrontendRequest request;
    request.language = language;
    request.source = source;
    request.file_name = language == Language::kPython ? "mine.py" : "mine.rs";
    request.kernel_name = "reduce";
    request.parameters = find_contract_info("one_accumulator")->kernel_parameters;
    request.time_limit = limit;
    return compile_with_frontend(request);
  }
  static void expect_no_host_content(const FrontendResult& result) {
    std::string everything = result.compile.log;
    for (const auto& diagnostic : result.compile.diagnostics) everything += diagnostic.message;
    EXPECT_EQ(everything.find("root:"), std::string::npos) << everything;
    EXPECT_EQ(everything.find("/job/"), std::string::npos) << everything;
    EXPECT_EQ(everything.find("/usr/"), std::string::npos) << everything;
  }
};

TEST_F(FrontendTest, PythonReferenceBecomesPtxWithNumbasArrayAbiAndCountedBarriers) {
  const auto result = compile(Language::kPython, read_course_file("reduction/03-block-tree/reference.py"));
  ASSERT_FALSE(result.judge_failure) << result.compile.log;
  ASSERT_TRUE(result.compile.ok) << result.compile.log;
  EXPECT_EQ(result.compile.format, ImageFormat::kPtx);
  EXPECT_EQ(result.compile.abi, ParameterAbi::kNumbaArrays);
  EXPECT_EQ(result.compile.image.back(), '\0');
  const std::string ptx(result.compile.image.data());
  EXPECT_NE(ptx.find(".entry " + result.compile.lowered_name), std::string::npos);
  auto counted = instrument_ptx_barriers(ptx, result.compile.source_file_index);
  ASSERT_TRUE(counted.has_value());
  EXPECT_GE(counted->barriers, 2);  // after the stores, and in each step of the fold
  EXPECT_EQ(counted->ptx.find("barrier at line 0"), std::string::npos)
      << "every barrier should have its line";
}

TEST_F(FrontendTest, RustReferenceBecomesPtxWithPlainParameters) {
  const auto result = compile(Language::kRust, read_course_file("reduction/03-block-tree/reference.rs"));
  ASSERT_FALSE(result.judge_failure) << result.compile.log;
  ASSERT_TRUE(result.compile.ok) << result.compile.log;
  EXPECT_EQ(result.compile.abi, ParameterAbi::kPlain);
  EXPECT_EQ(result.compile.lowered_name, "reduce");
  auto counted =
      instrument_ptx_barriers(std::string(result.compile.image.data()), result.compile.source_file_index);
  ASSERT_TRUE(counted.has_value());
  EXPECT_GE(counted->barriers, 2);
}

TEST_F(FrontendTest, PythonThatReadsAHostFileIsACompileErrorAtItsLine) {
  const auto result = compile(Language::kPython,
                              "from numba import cuda\n"
                              "SECRET = open('/etc/passwd').read()\n"
                              "@cuda.jit\n"
                              "def reduce(X, out, N):\n"
                              "    pass\n");
  ASSERT_FALSE(result.judge_failure) << result.compile.log;
  EXPECT_FALSE(result.compile.ok);
  ASSERT_FALSE(result.compile.diagnostics.empty());
  EXPECT_EQ(result.compile.diagnostics[0].line, 2);
  EXPECT_EQ(result.compile.diagnostics[0].file, "mine.py");
  expect_no_host_content(result);
}

TEST_F(FrontendTest, RustThatIncludesAHostFileIsACompileErrorAtItsLine) {
  const auto result =
      compile(Language::kRust,
              "const SECRET: &str = include_str!(\"/etc/passwd\");\n"
              "#[no_mangle]\n"
              "pub unsafe extern \"ptx-kernel\" fn reduce(x: *const f32, out: *mut f32, n: i32) {}\n");
  ASSERT_FALSE(result.judge_failure) << result.compile.log;
  EXPECT_FALSE(result.compile.ok);
  ASSERT_FALSE(result.compile.diagnostics.empty());
  EXPECT_EQ(result.compile.diagnostics[0].line, 1);
  expect_no_host_content(result);
}

TEST_F(FrontendTest, ASyntaxErrorNamesTheLearnersLine) {
  const auto python =
      compile(Language::kPython, "from numba import cuda\n\n@cuda.jit\ndef reduce(X, out, N)\n    pass\n");
  ASSERT_FALSE(python.judge_failure) << python.compile.log;
  EXPECT_FALSE(python.compile.ok);
  ASSERT_FALSE(python.compile.diagnostics.empty());
  EXPECT_EQ(python.compile.diagnostics[0].line, 4);
  const auto rust = compile(
      Language::kRust,
      "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn reduce(x: *const f32, out: *mut f32, n: i32) {\n"
      "    let a = ;\n}\n");
  ASSERT_FALSE(rust.judge_failure) << rust.compile.log;
  EXPECT_FALSE(rust.compile.ok);
  ASSERT_FALSE(rust.compile.diagnostics.empty());
  EXPECT_EQ(rust.compile.diagnostics[0].line, 3);
  expect_no_host_content(rust);
}

TEST_F(FrontendTest, TooMuchPtxIsTheLearnersLimitNotTheJudgesFailure) {
  // The reference's PTX is a few kilobytes; under a 1 KiB answer limit it stands for a file whose
  // tables make megabytes of PTX.
  FrontendRequest request;
  request.language = Language::kRust;
  request.source = read_course_file("reduction/03-block-tree/reference.rs");
  request.file_name = "mine.rs";
  request.kernel_name = "reduce";
  request.parameters = find_contract_info("one_accumulator")->kernel_parameters;
  request.max_answer_bytes = 1024;
  const auto result = compile_with_frontend(request);
  EXPECT_FALSE(result.judge_failure) << result.compile.log;
  EXPECT_FALSE(result.compile.ok);
  EXPECT_NE(result.compile.log.find("of PTX"), std::string::npos) << result.compile.log;
}

TEST_F(FrontendTest, ACompileThatNeverEndsIsStoppedAtItsLimit) {
  // Exponential macro expansion: rustc works on it far past the limit given here.
  const auto result =
      compile(Language::kRust,
              "macro_rules! grow { () => {}; ($x:tt $($rest:tt)*) => { grow!($($rest)*); "
              "grow!($($rest)*); }; }\n"
              "grow!(a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a);\n"
              "#[no_mangle]\n"
              "pub unsafe extern \"ptx-kernel\" fn reduce(x: *const f32, out: *mut f32, n: i32) {}\n",
              std::chrono::milliseconds(3000));
  ASSERT_FALSE(result.judge_failure) << result.compile.log;
  EXPECT_FALSE(result.compile.ok);
  EXPECT_NE(result.compile.log.find("limit"), std::string::npos) << result.compile.log;
  EXPECT_LT(result.compile.compile_ms, 10000);
}

}  // namespace
}  // namespace cudojo

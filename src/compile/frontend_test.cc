// The Python and Rust front ends as the judge runs them: embedded scripts, in the sandbox. Hostile
// files get compile errors that quote nothing of the host.
#include "compile/frontend.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

// What the parent makes of a front end's answer, fed made-up answers: the learner's module runs in
// the sandbox and can print anything, so whatever does not fit is refused as the learner's compile
// error with a sentence naming what did not fit, and nothing of it crashes the judge.
FrontendRequest python_request() {
  FrontendRequest request;
  request.language = Language::kPython;
  request.source = "from numba import cuda\n\n@cuda.jit\ndef reduce(X, out, N):\n    pass\n";
  request.file_name = "mine.py";
  request.kernel_name = "reduce";
  request.max_answer_bytes = 1 << 16;
  return request;
}

SandboxResult answered(std::string out) {
  SandboxResult ran;
  ran.started = ran.exited = true;
  ran.code = 0;
  ran.out = std::move(out);
  return ran;
}

const std::string kPtx =
    ".version 8.0\n.target sm_90\n.address_size 64\n\t.file\t1 \"mine.py\"\n"
    ".visible .entry kernel_1(\n\t.param .u64 X\n)\n{\n\tret;\n}\n";

nlohmann::json good_answer() {
  return {{"ok", true},
          {"ptx", kPtx},
          {"entry", "kernel_1"},
          {"abi", "plain"},
          {"diagnostics", nlohmann::json::array()},
          {"log", ""}};
}

TEST(FrontendAnswer, AWellFormedAnswerIsTheBuild) {
  const auto result = read_frontend_answer(python_request(), answered(good_answer().dump()));
  ASSERT_FALSE(result.judge_failure) << result.compile.log;
  ASSERT_TRUE(result.compile.ok) << result.compile.log;
  EXPECT_EQ(result.compile.lowered_name, "kernel_1");
  EXPECT_EQ(result.compile.abi, ParameterAbi::kPlain);
  EXPECT_EQ(result.compile.source_file_index, 1);
  EXPECT_EQ(std::string(result.compile.image.data()), kPtx);
}

TEST(FrontendAnswer, AnIllFormedAnswerIsTheLearnersCompileErrorNamingWhatDidNotFit) {
  const auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json answer = good_answer();
    answer[key] = std::move(value);
    return answer.dump();
  };
  const auto without = [](const char* key) {
    nlohmann::json answer = good_answer();
    answer.erase(key);
    return answer.dump();
  };
  const auto diagnostic = [](nlohmann::json item) {
    return nlohmann::json{
        {"ok", false}, {"log", "x"}, {"diagnostics", nlohmann::json::array({std::move(item)})}}
        .dump();
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Traceback (most recent call last):", "not one JSON object"},
      {good_answer().dump() + good_answer().dump(), "not one JSON object"},
      {"[1, 2]", "not a JSON object"},
      {std::string(60000, '['), "nests deeper"},
      {without("ok"), "\"ok\" is missing"},
      {with("ok", "yes"), "\"ok\" is not true or false"},
      {with("internal", 1), "\"internal\" is not true or false"},
      {with("log", 5), "\"log\" is not text"},
      {with("diagnostics", "none"), "\"diagnostics\" is not a list"},
      {with("diagnostics", nlohmann::json::array({1})), "\"diagnostics[0]\" is not an object"},
      {diagnostic({{"line", -1}}), "\"diagnostics[0].line\" is not a line of the file"},
      {diagnostic({{"line", 100}}), "\"diagnostics[0].line\" is not a line of the file"},  // of 5
      {diagnostic({{"line", 2.5}}), "\"diagnostics[0].line\" is not a line of the file"},
      {diagnostic({{"line", "2"}}), "\"diagnostics[0].line\" is not a line of the file"},
      {diagnostic({{"column", 1ull << 40}}), "\"diagnostics[0].column\" is not a column"},
      {diagnostic({{"severity", "<b>fatal</b>"}}),
       "\"diagnostics[0].severity\" is not error, warning or note"},
      {diagnostic({{"message", {{"a", 1}}}}), "\"diagnostics[0].message\" is not text"},
      {without("ptx"), "\"ptx\" is missing"},
      {with("ptx", ""), "\"ptx\" is empty"},
      {with("ptx", std::string("x\0y", 3)), "holds a NUL byte"},
      {with("ptx", 42), "\"ptx\" is not text"},
      {without("entry"), "\"entry\" is missing"},
      {with("entry", "kernel_1(); .entry evil"), "\"entry\" is not a PTX name"},
      {with("entry", std::string(5000, 'k')), "\"entry\" is not a PTX name"},
      {with("entry", "kernel_2"), "declares no \".entry\""},
      {with("abi", "fortran"), "\"abi\" is not a known parameter ABI"},
      {with("source_file_index", -1), "\"source_file_index\" is not a .file number"},
      {with("source_file_index", 7), "no \".file 7\""},
  };
  for (const auto& [answer, named] : cases) {
    SCOPED_TRACE(answer.substr(0, 120));
    const auto result = read_frontend_answer(python_request(), answered(answer));
    EXPECT_FALSE(result.judge_failure) << result.compile.log;
    EXPECT_FALSE(result.compile.ok);
    EXPECT_NE(result.compile.log.find(
                  "mine.py: error: the Python (Numba) compile gave an answer the judge cannot read"),
              std::string::npos)
        << result.compile.log;
    EXPECT_NE(result.compile.log.find(named), std::string::npos) << result.compile.log;
    ASSERT_EQ(result.compile.diagnostics.size(), 1u);
    EXPECT_EQ(result.compile.diagnostics[0].file, "mine.py");
  }
}

TEST(FrontendAnswer, AnAnswerAtItsSizeLimitIsRefusedBeforeItIsParsed) {
  // The sandbox keeps max_answer_bytes of the output and drops the rest.
  const FrontendRequest request = python_request();
  const auto result = read_frontend_answer(request, answered(std::string(request.max_answer_bytes, '[')));
  EXPECT_FALSE(result.judge_failure);
  EXPECT_FALSE(result.compile.ok);
  EXPECT_NE(result.compile.log.find("of PTX"), std::string::npos) << result.compile.log;
}

TEST(FrontendAnswer, NoAnswerAtAllIsTheLearnersCompileError) {
  SandboxResult ran = answered("");
  ran.code = 1;
  const auto result = read_frontend_answer(python_request(), ran);
  EXPECT_FALSE(result.judge_failure) << result.compile.log;
  EXPECT_FALSE(result.compile.ok);
  EXPECT_NE(result.compile.log.find("ended (exit 1) without an answer"), std::string::npos)
      << result.compile.log;
}

TEST(FrontendAnswer, OnlyAWellFormedInternalAnswerIsTheJudgesFailure) {
  const auto result = read_frontend_answer(
      python_request(), answered(R"({"ok": false, "internal": true, "log": "no libdevice"})"));
  EXPECT_TRUE(result.judge_failure);
  EXPECT_EQ(result.compile.log, "no libdevice");
}

TEST(FrontendAnswer, ManyDiagnosticsAreCutToFiftyWithANote) {
  nlohmann::json answer = {{"ok", false}, {"log", "errors"}, {"diagnostics", nlohmann::json::array()}};
  for (int i = 0; i < 80; ++i)
    answer["diagnostics"].push_back({{"line", 1 + i % 5}, {"severity", "error"}, {"message", "bad"}});
  const auto result = read_frontend_answer(python_request(), answered(answer.dump()));
  ASSERT_FALSE(result.judge_failure);
  ASSERT_EQ(result.compile.diagnostics.size(), 50u);
  EXPECT_EQ(result.compile.diagnostics.back().message, "31 more diagnostics are in the compiler's log");
}

TEST(FrontendAnswer, AForkBombIsTheLearnersCompileErrorNamingTheProcessLimit) {
  SandboxResult ran = answered("");
  ran.exited = false;
  ran.signal = SIGKILL;
  ran.process_limit_reached = true;
  ran.failure = "it held more than its limit of 64 processes and threads at once and was stopped";
  const auto result = read_frontend_answer(python_request(), ran);
  EXPECT_FALSE(result.judge_failure);
  EXPECT_FALSE(result.compile.ok);
  EXPECT_NE(result.compile.log.find("mine.py: error: the Python (Numba) compile held more than the sandbox's "
                                    "limit of " +
                                    std::to_string(kDefaultLimits.frontend_max_processes) +
                                    " processes and threads at once"),
            std::string::npos)
      << result.compile.log;
  EXPECT_NE(result.compile.log.find("fork bomb"), std::string::npos) << result.compile.log;
}

}  // namespace
}  // namespace cudojo

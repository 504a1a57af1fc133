// These tests run the real NVRTC (no GPU is needed to compile).
#include "compile/nvrtc_compiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compile/compile_test_support.h"
#include "compile/utf8.h"

namespace cudojo {
namespace {

using testing::accumulator_request;

constexpr const char* kGoodKernel =
    "__global__ void reduce(const float* X, float* out, int N) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < N) atomicAdd(out, X[i]);\n"
    "}\n";

TEST(Nvrtc, CompilesAKernelToCubinWithItsLoweredName) {
  auto result = compile_kernel(accumulator_request(kGoodKernel));
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_FALSE(result.image.empty());
  EXPECT_EQ(result.lowered_name, "_Z6reducePKfPfi");
}

TEST(Nvrtc, ExternCIsOptional) {
  auto result = compile_kernel(accumulator_request(std::string("extern \"C\" ") + kGoodKernel));
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.lowered_name, "reduce");
}

TEST(Nvrtc, UsualIncludesWorkAndPrintfNeedsNone) {
  auto result = compile_kernel(accumulator_request(
      "#include <cstdio>\n#include <cuda_runtime.h>\n#include <cstdint>\n#include <cooperative_groups.h>\n"
      "namespace cg = cooperative_groups;\n"
      "__device__ float twice(float v) { return 2.0f * v; }\n"
      "__global__ void reduce(const float* X, float* out, int N) {\n"
      "  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  cg::thread_block block = cg::this_thread_block();\n"
      "  if (i == 0) printf(\"N = %d\\n\", N);\n"
      "  if (i < N) atomicAdd(out, twice(X[i]));\n"
      "  block.sync();\n"
      "}\n"));
  EXPECT_TRUE(result.ok) << result.log;
}

TEST(Nvrtc, DiagnosticsPointAtTheLearnersFileAndLine) {
  auto result =
      compile_kernel(accumulator_request("// line 1\n"
                                         "__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                         "  if (i < N) atomicAdd(out, X[j]);\n"
                                         "}\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_FALSE(result.diagnostics.empty()) << result.log;
  EXPECT_EQ(result.diagnostics[0].file, "mine.cu");
  EXPECT_EQ(result.diagnostics[0].line, 4);
  EXPECT_EQ(result.diagnostics[0].severity, "error");
  EXPECT_NE(result.diagnostics[0].message.find("\"j\""), std::string::npos);
}

TEST(Nvrtc, WrongSignatureIsExplainedInTheStagesTerms) {
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(float* X, float* out, int N) { }\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_FALSE(result.diagnostics.empty());
  const auto& message = result.diagnostics.back().message;
  EXPECT_NE(message.find("__global__ void reduce(const float* X, float* out, int N)"), std::string::npos)
      << message;
  // The judge's appended lines never show up as the learner's line numbers.
  for (const auto& d : result.diagnostics) EXPECT_LE(d.line, 1);
}

TEST(Nvrtc, MissingKernelIsExplained) {
  auto result =
      compile_kernel(accumulator_request("__global__ void sum(const float* X, float* out, int N) { }\n"));
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.log.find("no kernel named reduce was found"), std::string::npos) << result.log;
  EXPECT_EQ(result.log.find("__nv_name_map"), std::string::npos);
}

TEST(Nvrtc, HostFileIsNeverRead) {
  // A file with a recognisable first line: if NVRTC opened it, the line would appear in the log.
  const std::string secret_path = "/tmp/cudojo_secret_test.h";
  std::ofstream(secret_path) << "cudojo-secret-line-do-not-print\n";
  for (const std::string& attack :
       {"#include \"" + secret_path + "\"\n", "#define P \"" + secret_path + "\"\n#include P\n",
        "#inc\\\nlude \"" + secret_path + "\"\n",
        "int x = 1'0'/*';\n#include \"" + secret_path + "\"\n// */\n"}) {
    auto result = compile_kernel(accumulator_request(attack + kGoodKernel));
    EXPECT_FALSE(result.ok) << attack;
    EXPECT_EQ(result.log.find("cudojo-secret-line"), std::string::npos) << result.log;
    for (const auto& d : result.diagnostics)
      EXPECT_EQ(d.message.find("cudojo-secret-line"), std::string::npos);
  }
}

TEST(Nvrtc, BinarySourcesAreRefusedBeforeCompiling) {
  auto binary = compile_kernel(accumulator_request(std::string("int a;\0int b;", 13)));
  EXPECT_FALSE(binary.ok);
  EXPECT_NE(binary.log.find("NUL"), std::string::npos);
}

TEST(Nvrtc, ParsesLogLines) {
  auto diagnostics = parse_nvrtc_log(
      "mine.cu(12): error: identifier \"x\" is undefined\n  code\n  ^\n\n"
      "mine.cu(3): warning: variable \"y\" was declared but never referenced\n"
      "mine.cu(1): catastrophic error: cannot open source file \"q\"\n");
  ASSERT_EQ(diagnostics.size(), 3u);
  EXPECT_EQ(diagnostics[0].line, 12);
  EXPECT_EQ(diagnostics[1].severity, "warning");
  EXPECT_EQ(diagnostics[2].severity, "catastrophic error");
}

TEST(Nvrtc, QuotedSourceLinesNeverPassForDiagnostics) {
  // The excerpt is indented: a learner's line that looks like a diagnostic stays an excerpt.
  auto diagnostics = parse_nvrtc_log(
      "mine.cu(2): error: expected a \";\"\n"
      "  mine.cu(9): error: a fake one\n"
      "  ^\n");
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].line, 2);
  EXPECT_EQ(diagnostics[0].context, "mine.cu(9): error: a fake one\n^");
}

TEST(Nvrtc, ParsesNumberedWarningsWithTheirColumnAndExcerpt) {
  // NVRTC numbers its warnings ("#177-D"); the excerpt is the source line and a caret, both
  // indented by two spaces, one caret column per byte.
  auto diagnostics = parse_nvrtc_log(
      "mine.cu(2): warning #177-D: variable \"unused\" was declared but never referenced\n"
      "    int unused;\n"
      "        ^\n"
      "\n"
      "mine.cu(5): warning #1105-D: something else\n"
      "  /* \xC3\xA9 */ x\n"
      "           ^\n"
      "\n"
      "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n");
  ASSERT_EQ(diagnostics.size(), 2u);
  EXPECT_EQ(diagnostics[0].severity, "warning");
  EXPECT_EQ(diagnostics[0].line, 2);
  EXPECT_EQ(diagnostics[0].column, 7);
  EXPECT_EQ(diagnostics[0].message, "variable \"unused\" was declared but never referenced");
  EXPECT_EQ(diagnostics[0].context, "  int unused;\n      ^");
  EXPECT_EQ(diagnostics[1].severity, "warning");
  EXPECT_EQ(diagnostics[1].column, 9);  // "é" is two bytes but one character
}

TEST(Nvrtc, FileNamesAreSanitized) {
  EXPECT_EQ(sanitize_file_name("/home/me/my kernel.cu"), "my_kernel.cu");
  EXPECT_EQ(sanitize_file_name("../.."), "submission.cu");
  EXPECT_EQ(sanitize_file_name("a(1).cu"), "a_1_.cu");
}

// ---- Diagnostics as the learner sees them ----------------------------------------------------

bool all_valid_utf8(const CompileResult& result) {
  auto valid = [](const std::string& text) { return valid_utf8(text) == text; };
  if (!valid(result.log)) return false;
  for (const auto& d : result.diagnostics) {
    if (!valid(d.file) || !valid(d.message) || !valid(d.context) || !valid(d.severity)) return false;
  }
  return true;
}

TEST(Nvrtc, DiagnosticsCarryTheColumnAndTheCompilersExcerpt) {
  auto result =
      compile_kernel(accumulator_request("// line 1\n"
                                         "__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                         "  if (i < N) atomicAdd(out, X[j]);\n"
                                         "}\n"));
  ASSERT_FALSE(result.diagnostics.empty()) << result.log;
  const Diagnostic& d = result.diagnostics[0];
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 31);  // the j
  EXPECT_EQ(d.context, "  if (i < N) atomicAdd(out, X[j]);\n                              ^");
}

TEST(Nvrtc, ColumnsCountCharactersNotBytes) {
  // A tab and a two-byte character before the error: the caret stands under byte 41 (0-based), so
  // the column is 42 in bytes and 41 in characters.
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "\t\tint i = blockIdx.x; /* \xC3\xA9 */ float q = zz;\n"
                                         "}\n"));
  ASSERT_FALSE(result.diagnostics.empty()) << result.log;
  EXPECT_EQ(result.diagnostics[0].line, 2);
  EXPECT_EQ(result.diagnostics[0].column, 41);
}

TEST(Nvrtc, WarningsAreKeptAndDoNotFailTheCompile) {
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  int unused;\n"
                                         "  if (threadIdx.x == 0) atomicAdd(out, X[0]);\n"
                                         "}\n"));
  ASSERT_TRUE(result.ok) << result.log;
  ASSERT_EQ(result.diagnostics.size(), 1u) << result.log;
  EXPECT_EQ(result.diagnostics[0].severity, "warning");
  EXPECT_EQ(result.diagnostics[0].file, "mine.cu");
  EXPECT_EQ(result.diagnostics[0].line, 2);
  EXPECT_EQ(result.diagnostics[0].column, 7);
  EXPECT_NE(result.diagnostics[0].message.find("\"unused\""), std::string::npos);
  EXPECT_EQ(result.log.find("-diag-suppress"), std::string::npos) << result.log;
}

TEST(Nvrtc, AnErrorInsideACudaHeaderNamesTheHeaderAndTheLearnersLine) {
  // BlockReduce of a struct without operator+: the error is deep inside CUB; the learner's line is
  // the Sum call (line 7), which NVRTC names in its "detected during" list.
  auto result =
      compile_kernel(accumulator_request("#include <cub/block/block_reduce.cuh>\n"
                                         "struct Pair { int a; };\n"
                                         "__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  using R = cub::BlockReduce<Pair, 128>;\n"
                                         "  __shared__ typename R::TempStorage storage;\n"
                                         "  Pair p{1};\n"
                                         "  Pair s = R(storage).Sum(p);\n"
                                         "  *out = s.a;\n"
                                         "}\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_FALSE(result.diagnostics.empty()) << result.log;
  const Diagnostic& first = result.diagnostics[0];
  EXPECT_EQ(first.severity, "error");
  EXPECT_TRUE(first.file.starts_with("cub/")) << first.file;
  bool note_at_call = false;
  for (const auto& d : result.diagnostics) {
    if (d.file == "mine.cu") {
      EXPECT_LE(d.line, 9) << d.message;  // never a header's line number as the learner's
      if (d.severity == "note" && d.line == 7) note_at_call = true;
    }
    EXPECT_EQ(d.file.find(default_cuda_include_dir()), std::string::npos) << d.file;
  }
  EXPECT_TRUE(note_at_call) << result.log;
  EXPECT_EQ(result.log.find(default_cuda_include_dir()), std::string::npos);
}

TEST(Nvrtc, AnErrorInsideAHeaderBrokenByAMacroPointsAtTheInclude) {
  auto result =
      compile_kernel(accumulator_request("// a macro that breaks CUDA's headers\n"
                                         "#define warpSize 3 +\n"
                                         "#include <cooperative_groups.h>\n"
                                         "__global__ void reduce(const float* X, float* out, int N) {}\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_FALSE(result.diagnostics.empty());
  EXPECT_NE(result.diagnostics[0].file, "mine.cu");
  bool note_at_include = false;
  for (const auto& d : result.diagnostics) {
    if (d.file == "mine.cu") EXPECT_LE(d.line, 4);
    if (d.file == "mine.cu" && d.severity == "note" && d.line == 3) note_at_include = true;
  }
  EXPECT_TRUE(note_at_include) << result.log;
}

TEST(Nvrtc, TheCubUmbrellaHeaderIsRefusedAtOnceNamingTheHeadersThatWork) {
  auto result =
      compile_kernel(accumulator_request(std::string("// sum\n#include <cub/cub.cuh>\n") + kGoodKernel));
  ASSERT_FALSE(result.ok);
  ASSERT_EQ(result.diagnostics.size(), 1u) << result.log;
  EXPECT_EQ(result.diagnostics[0].line, 2);
  EXPECT_NE(result.diagnostics[0].message.find("<cub/block/block_reduce.cuh>"), std::string::npos);
  EXPECT_LT(result.compile_ms, 100.0);  // refused before compiling
}

TEST(Nvrtc, MessagesNamingCompilerOptionsAreRewritten) {
  auto result =
      compile_kernel(accumulator_request("int helper(int v) { return v + 1; }\n"
                                         "int counter = 0;\n" +
                                         std::string(kGoodKernel)));
  ASSERT_FALSE(result.ok);
  ASSERT_GE(result.diagnostics.size(), 2u) << result.log;
  for (const auto& d : result.diagnostics) {
    EXPECT_EQ(d.message.find("-default-device"), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find("JIT"), std::string::npos) << d.message;
  }
  EXPECT_NE(result.diagnostics[0].message.find("__device__"), std::string::npos);
  EXPECT_EQ(result.log.find("-default-device"), std::string::npos) << result.log;
}

TEST(Nvrtc, ASignatureMismatchSaysWhatWasFoundAndWhatIsWanted) {
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(float* X, float* out, int N) { }\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_EQ(result.diagnostics.size(), 1u) << result.log;
  EXPECT_EQ(result.diagnostics[0].message,
            "reduce is declared as void(float*, float*, int); the stage launches `__global__ void "
            "reduce(const float* X, float* out, int N)` (extern \"C\" is optional, the parameter types "
            "must be exactly these)");
  EXPECT_EQ(result.log.find("cudojo_signature_check"), std::string::npos) << result.log;
}

TEST(Nvrtc, TheSignatureCheckCannotBeSwitchedOffByMacros) {
  const std::string wrong = "__global__ void reduce(float* X, float* out, int N) {}\n";
  const std::string wrong_c = "extern \"C\" __global__ void reduce(float* X, float* out, int N) {}\n";
  for (const std::string& attack : {
           "#define static_assert(...)\n" + wrong,
           "#define static_assert(...)\n" + wrong_c,
           "#define decltype(x) void (*)(const float*, float*, int)\n" + wrong_c,
           "#define same same2\ntemplate <class A, class B> struct same2 { static constexpr bool value = "
           "true; };\n" +
               wrong_c,
           "#define value true || 1\n" + wrong_c,
           "#define sizeof(x) 1\n#define static_assert(...)\n" + wrong_c,
           "#define float double\n" +
               std::string("__global__ void reduce(const float* X, float* out, int N) {}\n"),
           "#define const\n" +
               std::string("extern \"C\" __global__ void reduce(const float* X, float* out, int N) {}\n"),
           "#pragma nv_diag_suppress 1574\n#pragma nv_diag_warning 1574\n" + wrong_c,
           wrong_c + "// a last line that splices into the next one \\\n",
           wrong_c +
               "#define static_assert(...)\n#define decltype(x) int\n#define bool int\n#define false 1\n",
       }) {
    auto result = compile_kernel(accumulator_request(attack));
    EXPECT_FALSE(result.ok) << attack;
    EXPECT_FALSE(result.diagnostics.empty()) << attack;
  }
  // The same tricks around a right kernel still compile.
  auto right = compile_kernel(accumulator_request("#define static_assert(...)\n#define decltype(x) int\n" +
                                                  std::string(kGoodKernel)));
  EXPECT_TRUE(right.ok) << right.log;
}

TEST(Nvrtc, ExpectedManglingsFollowTheItaniumAbi) {
  EXPECT_EQ(itanium_kernel_name("reduce", "void (*)(const float*, float*, int)"), "_Z6reducePKfPfi");
  EXPECT_EQ(itanium_kernel_name("reduce", "void (*)(float*, float*, int)"), "_Z6reducePfS_i");
  EXPECT_EQ(itanium_kernel_name("f", "void (*)(const float*, const float*)"), "_Z1fPKfS0_");
  EXPECT_EQ(itanium_kernel_name("count", "void (*)(int*)"), "_Z5countPi");
  EXPECT_EQ(itanium_kernel_name("k", "void (*)()"), "_Z1kv");
  EXPECT_EQ(itanium_kernel_name("k", "void (*)(uint32_t*)"), std::nullopt);
  // Each against what NVRTC itself names a C++ kernel of that type.
  for (const auto& [type, parameters] : std::vector<std::pair<std::string, std::string>>{
           {"void (*)(const float*, float*, int)", "const float* X, float* out, int N"},
           {"void (*)(int*)", "int* c"},
           {"void (*)(float, int)", "float pattern, int words"},
           {"void (*)(const float4*, long long, float*)", "const float4* data, long long count, float* sink"},
           {"void (*)(const float*, const float*, float*, unsigned long long)",
            "const float* a, const float* b, float* c, unsigned long long n"}}) {
    CompileRequest request = accumulator_request("__global__ void reduce(" + parameters + ") {}\n");
    request.kernel_parameters = parameters;
    request.kernel_pointer_type = type;
    auto result = compile_kernel(request);
    ASSERT_TRUE(result.ok) << type << "\n" << result.log;
    EXPECT_EQ(itanium_kernel_name("reduce", type), result.lowered_name) << type;
  }
}

TEST(Nvrtc, IncludesNeverLookInTheWorkingDirectory) {
  // A cub/evil.h in the working directory: "cub/..." is an allowed name, so only where NVRTC looks
  // keeps the file from being read. The learner's file would see its macro if it were.
  const auto dir = std::filesystem::temp_directory_path() / ("cudojo_cwd_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "cub");
  std::ofstream(dir / "cub" / "evil.h") << "#define CUDOJO_EVIL_WAS_READ 1\n";
  const std::string tell = "#ifdef CUDOJO_EVIL_WAS_READ\n#error cudojo-evil-was-read\n#endif\n";
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  std::vector<std::pair<std::string, CompileResult>> results;
  for (const std::string& source : {
           "#include \"cub/evil.h\"\n" + tell + kGoodKernel,
           "#include <cub/evil.h>\n" + tell + kGoodKernel,
           "#if __has_include(\"cub/evil.h\")\n#error cudojo-evil-exists\n#endif\n" +
               std::string(kGoodKernel),
       }) {
    results.emplace_back(source, compile_kernel(accumulator_request(source)));
  }
  std::filesystem::current_path(previous);
  std::filesystem::remove_all(dir);
  for (const auto& [source, result] : results) {
    EXPECT_EQ(result.log.find("cudojo-evil"), std::string::npos) << source << result.log;
  }
  ASSERT_FALSE(results[0].second.diagnostics.empty());
  EXPECT_NE(results[0].second.diagnostics[0].message.find("cannot open source file \"cub/evil.h\""),
            std::string::npos)
      << results[0].second.log;
  EXPECT_TRUE(results[2].second.ok) << results[2].second.log;  // not found, so no #error
}

TEST(Nvrtc, QuotedIncludesOfAllowedHeadersStillWork) {
  // "name" is compiled as <name>: shims and CUDA's headers are found either way.
  auto result = compile_kernel(
      accumulator_request("#include \"cstdio\"\n#include \"cstdint\"\n#include \"cooperative_groups.h\"\n" +
                          std::string(kGoodKernel)));
  EXPECT_TRUE(result.ok) << result.log;
}

TEST(Nvrtc, HasIncludeCannotAskAboutHostFiles) {
  for (const std::string& probe : {
           std::string("#if __has_include(\"/etc/passwd\")\n#error exists\n#endif\n"),
           std::string("#if __has_include(<../../../../../../etc/passwd>)\n#error exists\n#endif\n"),
           std::string(
               "#define CAT(a, b) a##b\n#if CAT(__has_, include)(\"/etc/passwd\")\n#error exists\n#endif\n"),
           std::string("#define H __has_include\n#if H(\"/etc/passwd\")\n#error exists\n#endif\n"),
           std::string("#include <cuda/std/cstdint>\n#if _CCCL_HAS_INCLUDE(\"/etc/passwd\")\n#error "
                       "exists\n#endif\n"),
           std::string("#if __has_include_next(<cstdio>)\n#error exists\n#endif\n"),
       }) {
    auto result = compile_kernel(accumulator_request(probe + kGoodKernel));
    EXPECT_FALSE(result.ok) << probe;
    EXPECT_NE(result.log.find("nothing was read from the host"), std::string::npos) << probe << result.log;
    EXPECT_EQ(result.log.find("#error"), std::string::npos) << result.log;
  }
  // Asking about an allowed header, named directly, is fine.
  auto allowed = compile_kernel(accumulator_request(
      std::string("#if __has_include(<cub/block/block_reduce.cuh>)\n#define HAVE_CUB 1\n#endif\n") +
      kGoodKernel));
  EXPECT_TRUE(allowed.ok) << allowed.log;
}

TEST(Nvrtc, AByteOrderMarkIsSkippedAndLinesStay) {
  auto good = compile_kernel(accumulator_request(std::string("\xEF\xBB\xBF") + kGoodKernel));
  EXPECT_TRUE(good.ok) << good.log;
  auto bad =
      compile_kernel(accumulator_request("\xEF\xBB\xBF// one\n"
                                         "__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  *out = X[k];\n"
                                         "}\n"));
  ASSERT_FALSE(bad.diagnostics.empty()) << bad.log;
  EXPECT_EQ(bad.diagnostics[0].line, 3);
  EXPECT_EQ(bad.diagnostics[0].column, 12);
}

TEST(Nvrtc, TrigraphsInCommentsAndStringsAreText) {
  auto result =
      compile_kernel(accumulator_request("// what?"
                                         "?= and ?"
                                         "?/ in a comment\n" +
                                         std::string(kGoodKernel) +
                                         "__device__ const char* text = \"?"
                                         "?=\";\n"));
  EXPECT_TRUE(result.ok) << result.log;
  EXPECT_TRUE(result.diagnostics.empty()) << result.log;  // no warning about trigraphs either
}

TEST(Nvrtc, NvrtcHasTrigraphsOffSoTheyCannotHideADirective) {
  // The scan treats ??= as text inside comments and strings; that is only safe because NVRTC's
  // C++17 mode does not translate trigraphs. If this fails, the scan must translate them.
  auto result =
      compile_kernel(accumulator_request("const char* s = \"?"
                                         "?/\"/*\";\n"
                                         "#error the-directive-ran\n*/\n" +
                                         std::string(kGoodKernel)));
  EXPECT_EQ(result.log.find("the-directive-ran"), std::string::npos) << result.log;
}

TEST(Nvrtc, EveryStringInTheResultIsValidUtf8) {
  // A Latin-1 comment on a line with an error puts a lone 0xE9 in NVRTC's excerpt.
  auto latin1 =
      compile_kernel(accumulator_request("__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  *out = X[k]; // caf\xE9\n"
                                         "}\n"));
  ASSERT_FALSE(latin1.ok);
  ASSERT_FALSE(latin1.diagnostics.empty());
  EXPECT_TRUE(all_valid_utf8(latin1)) << latin1.log;
  EXPECT_NE(latin1.diagnostics[0].context.find("caf\xEF\xBF\xBD"), std::string::npos);
  // A log cut at its byte limit inside a two-byte character.
  for (std::size_t limit = 40; limit < 90; ++limit) {
    CompileRequest request = accumulator_request(
        "__global__ void reduce(const float* X, float* out, int N) {\n"
        "  *out = X[k]; // \xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\n"
        "}\n");
    request.max_log_bytes = limit;
    EXPECT_TRUE(all_valid_utf8(compile_kernel(request))) << limit;
  }
  // A refused include whose excerpt is cut at 120 bytes.
  auto refused = compile_kernel(
      accumulator_request("#include \"x.h\" // " + std::string(60, 'a') + std::string(30, '\xC3') + "\n"));
  EXPECT_TRUE(all_valid_utf8(refused));
}

TEST(Nvrtc, AnAssemblerErrorWithoutALineSaysWhatTheCompilerSaid) {
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  asm volatile(\"bogus.instr %r1;\");\n"
                                         "}\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_EQ(result.diagnostics.size(), 1u) << result.log;
  EXPECT_EQ(result.diagnostics[0].severity, "error");
  EXPECT_EQ(result.diagnostics[0].line, 2);  // the one line of inline asm
  EXPECT_NE(result.diagnostics[0].message.find("ptxas"), std::string::npos);
  EXPECT_NE(result.diagnostics[0].context.find("'bogus'"), std::string::npos);  // all it said
}

TEST(Nvrtc, CandidatesFromCudasDeclarationsStayInTheLogAndDoNotWithholdIt) {
  // atomicAdd on a const pointer: NVRTC lists a dozen candidates, some in cuda_fp16.h, some in its
  // built-in declarations ("__nv_nvrtc_builtin_header.h", or no file at all). They are the
  // compiler's, not a host file: the log stays, and the one error is the learner's line.
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  atomicAdd(X, 1.0f);\n"
                                         "  float v = __shfl_down_sync(0xffffffff, X, 1);\n"
                                         "}\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_EQ(result.diagnostics.size(), 2u) << result.log;
  EXPECT_EQ(result.diagnostics[0].line, 2);
  EXPECT_NE(result.diagnostics[0].message.find("argument types are: (const float *, float)"),
            std::string::npos);
  EXPECT_EQ(result.diagnostics[1].line, 3);
  EXPECT_EQ(result.log.find("withheld"), std::string::npos) << result.log;
  EXPECT_EQ(result.log.find("__nv_nvrtc_builtin_header"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("atomicAdd(float *, float)"), std::string::npos) << result.log;
}

TEST(Nvrtc, AMissingBraceIsNotReportedAsAMissingKernel) {
  auto result =
      compile_kernel(accumulator_request("__global__ void reduce(const float* X, float* out, int N) {\n"
                                         "  if (N > 0) {\n"
                                         "    *out = X[0];\n"
                                         "}\n"));
  ASSERT_FALSE(result.ok);
  ASSERT_FALSE(result.diagnostics.empty());
  for (const auto& d : result.diagnostics) {
    EXPECT_EQ(d.message.find("no kernel"), std::string::npos) << d.message;
    EXPECT_LE(d.line, 4);
  }
  EXPECT_NE(result.diagnostics[0].message.find("expected a \"}\""), std::string::npos) << result.log;
}

}  // namespace
}  // namespace cudojo

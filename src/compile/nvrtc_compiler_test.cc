// These tests run the real NVRTC (no GPU is needed to compile).
#include "compile/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include <fstream>

#include "compile/barrier_instrumentation.h"

namespace cudojo {
namespace {

CompileRequest accumulator_request(const std::string& source) {
  CompileRequest request;
  request.source = source;
  request.file_name = "mine.cu";
  request.kernel_name = "reduce";
  request.kernel_parameters = "const float* X, float* out, int N";
  request.kernel_pointer_type = "void (*)(const float*, float*, int)";
  request.arch = "sm_90";
  request.cuda_include_dir = default_cuda_include_dir();
  return request;
}

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
  EXPECT_NE(result.log.find("no kernel matching"), std::string::npos) << result.log;
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

TEST(Nvrtc, FileNamesAreSanitized) {
  EXPECT_EQ(sanitize_file_name("/home/me/my kernel.cu"), "my_kernel.cu");
  EXPECT_EQ(sanitize_file_name("../.."), "submission.cu");
  EXPECT_EQ(sanitize_file_name("a(1).cu"), "a_1_.cu");
}

bool cubin_mentions(const CompileResult& result, std::string_view text) {
  return std::string_view(result.image.data(), result.image.size()).find(text) != std::string_view::npos;
}

CompileRequest counted(CompileRequest request) {
  request.pre_include_name = std::string(kBarrierHeaderName);
  request.pre_include_text = std::string(barrier_check_header());
  return request;
}

constexpr const char* kDivergentFold =
    "__global__ void reduce(const float* X, float* out, int N) {\n"
    "  extern __shared__ float s[];\n"
    "  int tid = threadIdx.x;\n"
    "  s[tid] = blockIdx.x * blockDim.x + tid < N ? X[blockIdx.x * blockDim.x + tid] : 0.0f;\n"
    "  __syncthreads();\n"
    "  for (int half = blockDim.x / 2; half > 0; half /= 2) {\n"
    "    if (tid < half) { s[tid] += s[tid + half]; __syncthreads(); }\n"
    "  }\n"
    "  if (tid == 0) atomicAdd(out, s[0]);\n"
    "}\n";

TEST(Nvrtc, TheCountedBuildCarriesTheBarrierCountersAndThePlainBuildDoesNot) {
  const auto plain = compile_kernel(accumulator_request(kDivergentFold));
  const auto with_counters = compile_kernel(counted(accumulator_request(kDivergentFold)));
  ASSERT_TRUE(plain.ok) << plain.log;
  ASSERT_TRUE(with_counters.ok) << with_counters.log;
  EXPECT_FALSE(cubin_mentions(plain, kBarrierPassesSymbol));
  EXPECT_TRUE(cubin_mentions(with_counters, kBarrierPassesSymbol));
  EXPECT_TRUE(cubin_mentions(with_counters, kBarrierLinesSymbol));
  EXPECT_TRUE(cubin_mentions(with_counters, kBarrierShapeSymbol));
  EXPECT_EQ(with_counters.lowered_name, plain.lowered_name);
}

TEST(Nvrtc, ASourceThatTakesTheCountersNamesBreaksOnlyTheCountedBuild) {
  // A learner's own `cudojo_barrier_passes` cannot overwrite the counters: the counted build
  // refuses to compile (the worker then reports the barrier check as not run), and the build that
  // is tested and timed is unaffected.
  const std::string source =
      std::string("extern \"C\" __device__ unsigned int cudojo_barrier_passes[4];\n") + kDivergentFold;
  EXPECT_TRUE(compile_kernel(accumulator_request(source)).ok);
  EXPECT_FALSE(compile_kernel(counted(accumulator_request(source))).ok);
}

TEST(Nvrtc, TheCountedBuildCompilesBesideCudaHeadersAndEveryBarrierForm) {
  const std::string source =
      "#include <cooperative_groups.h>\n"
      "#include <cub/block/block_reduce.cuh>\n"
      "__global__ void reduce(const float* X, float* out, int N) {\n"
      "  using Reduce = cub::BlockReduce<float, 256>;\n"
      "  __shared__ typename Reduce::TempStorage storage;\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  float sum = Reduce(storage).Sum(i < N ? X[i] : 0.0f);\n"
      "  int any = __syncthreads_or(i < N);\n"
      "  int all = __syncthreads_and(i < N);\n"
      "  int live = __syncthreads_count(i < N);\n"
      "  cooperative_groups::this_thread_block().sync();\n"
      "  if (threadIdx.x == 0 && any + all + live >= 0) atomicAdd(out, sum);\n"
      "}\n";
  const auto result = compile_kernel(counted(accumulator_request(source)));
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_TRUE(cubin_mentions(result, kBarrierLinesSymbol));
}

}  // namespace
}  // namespace cudojo

// The check build of real NVRTC output: what the CUDA 13 compiler emits for barriers and warp
// collectives written every way a learner can write them, counted at the learner's lines, and a
// module ptxas accepts.
#include "compile/check_build.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compile/compile_test_support.h"
#include "compile/nvrtc_compiler.h"
#include "compile/ptx_lines.h"
#include "compile/ptxas_test_support.h"

namespace cudojo {
namespace {

CompileResult compile(const std::string& source) {
  return compile_kernel(testing::accumulator_request(source));
}

CheckBuild check_build(const std::string& source) {
  const CompileResult compiled = compile(source);
  EXPECT_TRUE(compiled.ok) << compiled.log;
  auto checked = make_check_build(compiled.ptx, ptx_learner_file_index(compiled.ptx, "mine.cu"));
  EXPECT_TRUE(checked.has_value());
  return checked.value_or(CheckBuild{});
}

using testing::expect_ptxas_accepts;

// tests/known_gaps/ until this build: cooperative groups' block.sync() and an inline `bar.sync`,
// each inside the divergent branch at lines 10 and 11.
constexpr const char* kHiddenBarriers =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "__global__ void reduce(const float* X, float* out, int N) {\n"
    "  extern __shared__ float s[];\n"
    "  cg::thread_block block = cg::this_thread_block();\n"
    "  int tid = threadIdx.x;\n"
    "  s[tid] = blockIdx.x * blockDim.x + tid < N ? X[blockIdx.x * blockDim.x + tid] : 0.0f;\n"
    "  for (int half = blockDim.x / 2; half > 0; half /= 2) {\n"
    "    if (tid < half) { s[tid] += s[tid + half];\n"
    "      block.sync();\n"
    "      asm volatile(\"bar.sync 0;\" ::: \"memory\"); }\n"
    "  }\n"
    "  if (tid == 0) atomicAdd(out, s[0]);\n"
    "}\n";

TEST(CheckBuild, BarriersThroughCooperativeGroupsAndInlineAsmAreCountedAtTheLearnersLines) {
  const CheckBuild checked = check_build(kHiddenBarriers);
  EXPECT_GE(checked.barriers, 2);
  EXPECT_NE(checked.ptx.find("barrier at line 10"), std::string::npos);
  EXPECT_NE(checked.ptx.find("barrier at line 11"), std::string::npos);
  expect_ptxas_accepts(checked.ptx);
}

// Lanes past N return at line 5; every collective the course's stages use follows.
constexpr const char* kEveryCollective =
    "#include <cooperative_groups.h>\n"
    "namespace cg = cooperative_groups;\n"
    "__global__ void reduce(const float* X, float* out, int N) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i >= N) return;\n"
    "  float v = X[i];\n"
    "  v += __shfl_down_sync(0xffffffffu, v, 16);\n"
    "  unsigned live = __ballot_sync(0xffffffffu, v > 0.0f);\n"
    "  int all = __all_sync(0xffffffffu, v > 0.0f);\n"
    "  unsigned same = __match_any_sync(0xffffffffu, live);\n"
    "  unsigned total = __reduce_add_sync(0xffffffffu, same);\n"
    "  __syncwarp();\n"
    "  auto tile = cg::tiled_partition<32>(cg::this_thread_block());\n"
    "  v += tile.shfl_down(v, 8);\n"
    "  if ((threadIdx.x & 31) == 0) atomicAdd(out, v + all + total);\n"
    "}\n";

TEST(CheckBuild, EveryWarpCollectiveIsCheckedAtItsLearnerLine) {
  const CheckBuild checked = check_build(kEveryCollective);
  EXPECT_GE(checked.collectives, 7);
  for (int line : {7, 8, 9, 10, 11, 12, 14}) {
    EXPECT_NE(checked.ptx.find("collective at line " + std::to_string(line) + " "), std::string::npos)
        << "line " << line;
  }
  EXPECT_NE(checked.ptx.find("this lane leaves"), std::string::npos);
  expect_ptxas_accepts(checked.ptx);
}

TEST(CheckBuild, AModuleThatTakesAJudgeNameIsNamed) {
  const CompileResult taken = compile(
      std::string("extern \"C\" __device__ unsigned int cudojo_warp_gone_lanes[4];\n") + kEveryCollective);
  ASSERT_TRUE(taken.ok) << taken.log;
  EXPECT_EQ(judge_name_in_module(taken.ptx), std::optional<std::string>("cudojo_warp_gone_lanes"));
  EXPECT_FALSE(judge_name_in_module(compile(kEveryCollective).ptx).has_value());
}

}  // namespace
}  // namespace cudojo

// The planted build: which shared variables each kernel's prologue fills, on PTX written the way
// NVVM and LLVM write it, modules it leaves to the old planting, and real NVRTC output that ptxas
// accepts once planted.
#include "compile/ptx_planting.h"

#include <gtest/gtest.h>

#include <string>

#include "compile/check_build.h"
#include "compile/compile_test_support.h"
#include "compile/nvrtc_compiler.h"
#include "compile/ptxas_test_support.h"

namespace cudojo {
namespace {

// The prologue of the entry whose header names `entry`: from the planting's first line to its
// barrier.
std::string prologue_of(const std::string& ptx, const std::string& entry) {
  const auto header = ptx.find(".entry " + entry + "(");
  if (header == std::string::npos) return "";
  const auto start = ptx.find("cudojo planting: this block", header);
  if (start == std::string::npos) return "";
  const auto end = ptx.find("bar.sync 0;", start);
  return ptx.substr(start, end - start);
}

// As NVVM writes a module: a module-scope array reached only through a device function, another
// used only by the second kernel, variables moved into a kernel ("demoted"), dynamic memory.
constexpr const char* kTwoKernels = R"(.version 9.0
.target sm_90
.address_size 64

.shared .align 4 .b8 through_helper[128];
.shared .align 8 .b8 only_second[64];
.extern .shared .align 16 .b8 dyn[];

.func  (.param .b32 func_retval0) helper(
	.param .b32 helper_param_0
)
{
	.reg .b32 	%r<3>;
	mov.u32 	%r1, through_helper;
	ld.shared.u32 	%r2, [%r1];
	st.param.b32 	[func_retval0], %r2;
	ret;
}

.visible .entry first(
	.param .u64 first_param_0
)
{
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<3>;
	// demoted variable
	.shared .align 4 .b8 first_local[1024];
	// demoted variable
	.shared .align 1 .b8 first_flags[16];

	ld.param.u64 	%rd1, [first_param_0];
	mov.u32 	%r1, first_local;
	ld.shared.u32 	%r2, [first_flags];
	{
	.param .b32 retval0;
	call.uni (retval0), helper, (param0);
	}
	ret;
}

.visible .entry second(
	.param .u64 second_param_0
)
{
	.reg .b32 	%r<3>;
	mov.u32 	%r1, only_second;
	mov.u32 	%r2, dyn;
	ret;
}
)";

TEST(PlantedBuild, EachKernelFillsItsOwnSharedVariablesAndEveryOneOfTheModule) {
  const auto planted = make_planted_build(kTwoKernels);
  ASSERT_TRUE(planted.has_value());
  EXPECT_EQ(planted->kernels, 2);
  const std::string first = prologue_of(planted->ptx, "first");
  const std::string second = prologue_of(planted->ptx, "second");
  ASSERT_FALSE(first.empty());
  ASSERT_FALSE(second.empty());
  EXPECT_NE(first.find("mov.u32 %cjpr6, first_local;"), std::string::npos) << first;
  EXPECT_NE(first.find("mov.u32 %cjpr6, first_flags;"), std::string::npos) << first;
  // Module-scope variables in every kernel, named by it or not (a function reached through a
  // pointer names its own where no reading of calls looks).
  for (const std::string* prologue : {&first, &second}) {
    EXPECT_NE(prologue->find("mov.u32 %cjpr6, through_helper;"), std::string::npos) << *prologue;
    EXPECT_NE(prologue->find("mov.u32 %cjpr6, only_second;"), std::string::npos) << *prologue;
    // The launch's dynamic window too.
    EXPECT_NE(prologue->find(std::string("mov.u32 %cjpr6, ") + kPlantedDynamicSymbol), std::string::npos);
  }
  // Another kernel's demoted variable is not this one's.
  EXPECT_EQ(second.find("first_local"), std::string::npos) << second;
  // A byte-aligned array is filled by bytes only; a word-aligned one by words first.
  const auto flags = first.find("first_flags: 16 bytes");
  ASSERT_NE(flags, std::string::npos);
  const auto next_region = first.find("// ", flags + 3);
  EXPECT_EQ(first.substr(flags, next_region - flags).find("st.shared.u32"), std::string::npos);
  EXPECT_NE(first.find("first_local: 1024 bytes"), std::string::npos);
  EXPECT_EQ(planted->regions, 6);  // first: its two and the module's two; second: the module's two
}

TEST(PlantedBuild, ThePrologueComesAfterTheDeclarationsAndBeforeTheFirstInstruction) {
  const auto planted = make_planted_build(kTwoKernels);
  ASSERT_TRUE(planted.has_value());
  const auto demoted = planted->ptx.find(".shared .align 1 .b8 first_flags[16];");
  const auto planting = planted->ptx.find("cudojo planting: this block", planted->ptx.find(".entry first("));
  const auto first_instruction = planted->ptx.find("ld.param.u64 \t%rd1, [first_param_0];");
  ASSERT_NE(demoted, std::string::npos);
  ASSERT_NE(first_instruction, std::string::npos);
  EXPECT_LT(demoted, planting);
  EXPECT_LT(planting, first_instruction);
  // The pattern word is declared once, after the address size.
  EXPECT_NE(planted->ptx.find(std::string(".visible .global .align 4 .u32 ") + kPlantedPatternSymbol + ";"),
            std::string::npos);
}

TEST(PlantedBuild, ModulesItCannotReadAreLeftToTheOldPlanting) {
  std::string text = kTwoKernels;
  // No 64-bit addressing.
  std::string no_address_size = text;
  no_address_size.replace(no_address_size.find(".address_size 64"), 16, "");
  EXPECT_FALSE(make_planted_build(no_address_size).has_value());
  // A shared variable declared inside a device function.
  std::string in_function = text;
  in_function.replace(in_function.find("\t.reg .b32 \t%r<3>;\n\tmov.u32 \t%r1, through_helper;"), 0,
                      "\t.shared .align 4 .b8 hidden[16];\n");
  EXPECT_FALSE(make_planted_build(in_function).has_value());
  // A shared variable declared after the kernel's first instruction.
  std::string late = text;
  late.replace(late.find("\tmov.u32 \t%r1, first_local;"), 0, "\t.shared .align 4 .b8 late[16];\n");
  EXPECT_FALSE(make_planted_build(late).has_value());
  // A declaration it cannot size.
  std::string unsized = text;
  unsized.replace(unsized.find("through_helper[128]"), 19, "through_helper[]");
  EXPECT_FALSE(make_planted_build(unsized).has_value());
  // No kernel at all.
  EXPECT_FALSE(make_planted_build(".version 9.0\n.target sm_90\n.address_size 64\n").has_value());
  // Variables that could leave padding the planting would not fill: a lone float, an array whose
  // size is not a multiple of 16 bytes, an alignment above 16, an extern array aligned above 16.
  for (const char* padded : {".shared .align 4 .f32 total;", ".shared .align 1 .b8 seven[7];",
                             ".shared .align 32 .b8 wide[64];", ".extern .shared .align 128 .b8 big[];"}) {
    std::string module = text;
    module.replace(module.find(".shared .align 4 .b8 through_helper"), 0, std::string(padded) + "\n");
    EXPECT_FALSE(make_planted_build(module).has_value()) << padded;
  }
  // A shared variable declared by inline asm inside a line of other text.
  std::string inline_block = text;
  inline_block.replace(inline_block.find("\tmov.u32 \t%r1, first_local;"), 0,
                       "\t{ .reg .b32 t; .shared .align 4 .f32 hid[256]; mov.u32 t, hid; }\n");
  EXPECT_FALSE(make_planted_build(inline_block).has_value());
}

TEST(PlantedBuild, AModuleOfThousandsOfSharedVariablesKeepsTheOlderPlanting) {
  // Two kernels times 2100 variables: past the fills a planted build may hold.
  auto with_variables = [](int count) {
    std::string declarations;
    for (int v = 0; v < count; ++v)
      declarations += ".shared .align 4 .b8 many" + std::to_string(v) + "[16];\n";
    std::string module = kTwoKernels;
    module.replace(module.find(".shared .align 4 .b8 through_helper"), 0, declarations);
    return module;
  };
  EXPECT_FALSE(make_planted_build(with_variables(2100)).has_value());
  // A thousand is still planted.
  EXPECT_TRUE(make_planted_build(with_variables(1000)).has_value());
}

TEST(PlantedBuild, BracesInStringsAndVeryLongLinesDoNotMisleadIt) {
  // A brace in a pragma's string is not a block's end: what follows is still read.
  std::string pragma = kTwoKernels;
  pragma.replace(pragma.find("\tld.param.u64 \t%rd1, [first_param_0];"), 0, "\t.pragma \"}\";\n");
  const auto planted = make_planted_build(pragma);
  ASSERT_TRUE(planted.has_value());
  EXPECT_EQ(planted->kernels, 2);
  // A line of 600 000 blanks (inline asm can make one) is read past without recursion.
  std::string blanks = kTwoKernels;
  blanks.replace(blanks.find("\tld.param.u64 \t%rd1, [first_param_0];"), 0,
                 std::string(600'000, ' ') + "membar.cta;\n");
  EXPECT_TRUE(make_planted_build(blanks).has_value());
  // A long line that declares shared memory or opens a block is not read: the older planting.
  std::string long_shared = kTwoKernels;
  long_shared.replace(long_shared.find("\tmov.u32 \t%r1, first_local;"), 0,
                      std::string(5000, ' ') + "{ .shared .align 4 .f32 hid[256]; }\n");
  EXPECT_FALSE(make_planted_build(long_shared).has_value());
}

TEST(PlantedBuild, InitializedDataAndDebugSectionsOutsideKernelsAreReadPast) {
  // libcu++'s constants (`= {1}`) and LLVM's one-line empty section, as CUDA C++ and Rust emit them.
  std::string text = kTwoKernels;
  text.replace(text.find(".shared .align 4 .b8 through_helper"), 0,
               ".global .align 1 .b8 _ZN4cuda3std3__46chrono6MondayE[1] = {1};\n");
  text += "\t.section\t.debug_macinfo\t{\t}\n\t.section\t.debug_str\n\t{\n$L__info_string0:\n.b8 95,0\n\t}\n";
  const auto planted = make_planted_build(text);
  ASSERT_TRUE(planted.has_value());
  EXPECT_EQ(planted->kernels, 2);
  EXPECT_EQ(planted->regions, 6);
  // An initializer spread over lines is not read: the old planting.
  std::string spread = kTwoKernels;
  spread.replace(spread.find(".shared .align 4 .b8 through_helper"), 0,
                 ".global .align 4 .u32 table[2] = {\n1, 2};\n");
  EXPECT_FALSE(make_planted_build(spread).has_value());
}

TEST(PlantedBuild, TheJudgesPlantingNamesAreRefusedInALearnersModule) {
  EXPECT_EQ(judge_name_in_module(std::string(".global .u32 ") + kPlantedPatternSymbol + ";"),
            std::string(kPlantedPatternSymbol));
  EXPECT_EQ(judge_name_in_module(std::string(".extern .shared .b8 ") + kPlantedDynamicSymbol + "[];"),
            std::string(kPlantedDynamicSymbol));
}

TEST(PlantedBuild, RealNvrtcOutputIsAcceptedByPtxasOncePlanted) {
  const std::string source =
      "__device__ float rotate(float x) {\n"
      "  __shared__ float ring[32];\n"
      "  ring[threadIdx.x % 32] = x; __syncwarp();\n"
      "  return ring[(threadIdx.x + 1) % 32];\n"
      "}\n"
      "__global__ void reduce(const float* X, float* out, int N) {\n"
      "  __shared__ float sums[256];\n"
      "  __shared__ char seen[16];\n"
      "  extern __shared__ float more[];\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  sums[threadIdx.x] = i < N ? X[i] : 0.0f;\n"
      "  seen[threadIdx.x % 7] = 1; more[threadIdx.x] = 1.0f;\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0) atomicAdd(out, rotate(sums[5]) + seen[3] + more[2]);\n"
      "}\n";
  const CompileResult compiled = compile_kernel(testing::accumulator_request(source));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const auto planted = make_planted_build(compiled.ptx);
  ASSERT_TRUE(planted.has_value()) << compiled.ptx;
  EXPECT_EQ(planted->kernels, 1);
  EXPECT_EQ(planted->regions, 3) << planted->ptx;  // sums, seen, ring (moved into the kernel)
  testing::expect_ptxas_accepts(planted->ptx);
}

}  // namespace
}  // namespace cudojo

#include "compile/ptx_atomics.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cudojo {
namespace {

// Shapes from real PTX: NVRTC's (atom with a result, inlined) and a Rust-style call into a .func.
constexpr const char* kPtx = R"(
.version 9.0
.target sm_90
.address_size 64
.func  (.param .b32 func_retval0) add_to(
	.param .b64 add_to_param_0,
	.param .b32 add_to_param_1
);
.visible .entry block_partials(
	.param .u64 block_partials_param_0
)
{
	.loc	1 12 5
	st.global.f32 	[%rd2], %f1;
	atom.global.add.u32 	%r3, [%rd4], 1;
	ret;
}
.visible .entry fold_partials(
	.param .u64 fold_partials_param_0
)
{
	.loc	1 30 9
	{ // callseq 0
	call.uni (retval0), add_to, (param0, param1);
	} // callseq 0
	.loc	2 100 1
	red.global.add.f32 	[%rd1], %f2;
	ret;
}
.func  (.param .b32 func_retval0) add_to(
	.param .b64 add_to_param_0,
	.param .b32 add_to_param_1
)
{
	.loc	1 41 13
	atom.shared.add.f32 	%f3, [%rd7], %f4;
	ret;
}
.visible .entry unrelated()
{
	.loc	1 50 1
	atom.global.add.f32 	%f9, [%rd9], %f8;
}
)";

TEST(PtxAtomics, FindsFloatAtomicsInTheEntryAndWhatItCalls) {
  const auto found = float_atomics_in_kernel(kPtx, "fold_partials");
  ASSERT_EQ(found.size(), 2u);
  // The call's body first or second does not matter; both lines are there.
  std::vector<int> lines{found[0].line, found[1].line};
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<int>{0, 41}));  // line 0: the .loc named another file
  EXPECT_TRUE(found[0].instruction.find(".f32") != std::string::npos);
}

TEST(PtxAtomics, IntegerAtomicsAndOtherKernelsDoNotCount) {
  EXPECT_TRUE(float_atomics_in_kernel(kPtx, "block_partials").empty());
  EXPECT_TRUE(float_atomics_in_kernel(kPtx, "no_such_kernel").empty());
  const auto unrelated = float_atomics_in_kernel(kPtx, "unrelated");
  ASSERT_EQ(unrelated.size(), 1u);
  EXPECT_EQ(unrelated[0].line, 50);
  EXPECT_EQ(unrelated[0].instruction, "atom.global.add.f32");
}

// A large initialized __device__ array is one PTX line of megabytes, with braces of its own: the
// scan passes over it without losing track of the functions, and reads the kernels after it.
TEST(PtxAtomics, AHugeInitializerLineIsPassedOver) {
  std::string ptx =
      ".version 9.0\n.target sm_90\n.address_size 64\n.visible .global .align 1 .b8 big[3000000] = {";
  for (int i = 0; i < 3'000'000; ++i) ptx += i ? ", 1" : "1";
  ptx += "};\n";
  ptx += kPtx;
  const auto found = float_atomics_in_kernel(ptx, "unrelated");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 50);
}

}  // namespace
}  // namespace cudojo

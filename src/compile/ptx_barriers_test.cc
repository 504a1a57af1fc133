#include "compile/ptx_barriers.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compile/check_build.h"
#include "compile/ptxas_test_support.h"

namespace cudojo {
namespace {

// A small kernel as the CUDA 13 toolkit writes it with -lineinfo: an unconditional barrier at line
// 4, one behind a branch at line 5, and the same barrier again written as a predicated instruction.
constexpr std::string_view kPtx = R"(.version 9.0
.target sm_90
.address_size 64

.visible .entry k(
	.param .u64 k_param_0,
	.param .u32 k_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<3>;
	.reg .b32 	%r<11>;
	.reg .b64 	%rd<5>;
	.loc	1 1 0
	.shared .align 4 .b8 _ZZ1kE1s[256];

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u32 	%r2, [k_param_1];
	.loc	1 3 3
	mov.u32 	%r1, %tid.x;
	cvt.rn.f32.u32 	%f1, %r1;
	shl.b32 	%r3, %r1, 2;
	mov.u32 	%r4, _ZZ1kE1s;
	add.s32 	%r5, %r4, %r3;
	st.shared.f32 	[%r5], %f1;
	.loc	1 4 3
	bar.sync 	0;
	.loc	1 5 3
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;

	bar.sync 	0;

$L__BB0_2:
	.loc	2 9 3
	@!%p1 barrier.sync.aligned 	0;
	.loc	1 6 3
	mov.u32 	%r6, 63;
	sub.s32 	%r7, %r6, %r1;
	shl.b32 	%r8, %r7, 2;
	add.s32 	%r10, %r4, %r8;
	ld.shared.f32 	%f2, [%r10];
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	st.global.f32 	[%rd4], %f2;
	bar.warp.sync 	-1;
	ret;

}

	.file	1 "/tmp/k.cu"
	.file	2 "/tmp/other.cu"
)";

TEST(PtxBarriers, CountsEveryBlockBarrierAtItsLearnerLine) {
  auto counted = instrument_ptx_barriers(kPtx, 1);
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ(counted->barriers, 3);  // bar.warp.sync is a warp's, not the block's
  EXPECT_NE(counted->ptx.find(std::string(".visible .global .align 4 .u32 ") + kBarrierPassesSymbol),
            std::string::npos);
  EXPECT_NE(counted->ptx.find("barrier at line 4"), std::string::npos);
  EXPECT_NE(counted->ptx.find("barrier at line 5"), std::string::npos);
  // Line 9 is another file's: counted under line 0.
  EXPECT_NE(counted->ptx.find("barrier at line 0"), std::string::npos);
  // The predicated barrier's count is skipped exactly when the barrier is.
  EXPECT_NE(counted->ptx.find("@%p1 bra $cudojo_barrier_skip_0;"), std::string::npos);
  // Each line's slot is 4 bytes into the arrivals array.
  EXPECT_NE(counted->ptx.find("[%cjd3+16]"), std::string::npos);
}

TEST(PtxBarriers, AForgedLineNumberCannotCrashIt) {
  const std::string ptx =
      ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
      "\t.loc 99999999999999 99999999999999 1\n\tbar.sync 0;\n\tret;\n}\n";
  auto counted = instrument_ptx_barriers(ptx, 1);
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ(counted->barriers, 1);
  EXPECT_NE(counted->ptx.find("barrier at line 0"), std::string::npos);
}

TEST(PtxBarriers, RefusesWhatItDoesNotUnderstand) {
  EXPECT_FALSE(instrument_ptx_barriers(".version 9.0\n.target sm_90\n.address_size 32\n").has_value());
  EXPECT_FALSE(instrument_ptx_barriers("not ptx at all").has_value());
}

TEST(PtxBarriers, PtxasAcceptsTheCountedModule) {
  auto counted = instrument_ptx_barriers(kPtx, 1);
  ASSERT_TRUE(counted.has_value());
  testing::expect_ptxas_accepts(counted->ptx);
}

TEST(PtxBarriers, AVeryLongLineIsReadPastWithoutRecursionAndOneWithABarrierIsNotCounted) {
  const std::string module = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n";
  // 600 000 blanks before an instruction, as nested macros in inline asm can make.
  auto blanks =
      instrument_ptx_barriers(module + std::string(600'000, ' ') + "membar.cta;\n\tbar.sync 0;\n}\n", 1);
  ASSERT_TRUE(blanks.has_value());
  EXPECT_EQ(blanks->barriers, 1);
  EXPECT_FALSE(instrument_ptx_barriers(module + std::string(5000, ' ') + "bar.sync 0;\n}\n", 1).has_value());
}

}  // namespace
}  // namespace cudojo

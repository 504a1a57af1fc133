#include "compile/ptx_warp_collectives.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compile/check_build.h"
#include "compile/ptxas_test_support.h"

namespace cudojo {
namespace {

// A kernel as the CUDA 13 toolkit writes it: lanes past N leave early (a guarded ret), the rest
// shuffle with the full mask at line 7, vote with a mask held in a register at line 8 and meet at
// __syncwarp at line 9; a device function returns (not a leave) and another exits (a leave).
constexpr std::string_view kPtx = R"(.version 9.0
.target sm_90
.address_size 64

.func helper()
{
	.loc	1 20 3
	ret;
}

.func stop()
{
	exit;
}

.visible .entry k(
	.param .u32 k_param_0
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<10>;
	.loc	1 3 3
	ld.param.u32 	%r1, [k_param_0];
	mov.u32 	%r2, %tid.x;
	setp.ge.u32 	%p1, %r2, %r1;
	@%p1 ret;
	.loc	1 7 5
	shfl.sync.down.b32 	%r5|%p2, %r2, 16, 31, -1;
	.loc	1 8 5
	mov.u32 	%r9, -1;
	setp.ne.u32 	%p3, %r5, 0;
	vote.sync.ballot.b32 	%r6, %p3, %r9;
	.loc	1 9 5
	@!%p3 bar.warp.sync 	-1;
	ret;

}
	.file	1 "/tmp/k.cu"
)";

TEST(PtxWarpCollectives, ChecksEveryCollectiveAtItsLineAndMarksEveryLeave) {
  auto checked = instrument_ptx_warp_collectives(kPtx, 1);
  ASSERT_TRUE(checked.has_value());
  EXPECT_EQ(checked->collectives, 3);
  const std::string& ptx = checked->ptx;
  EXPECT_NE(ptx.find(std::string(".visible .global .align 4 .u32 ") + kWarpGoneSymbol), std::string::npos);
  EXPECT_NE(ptx.find("collective at line 7"), std::string::npos);
  EXPECT_NE(ptx.find("collective at line 8"), std::string::npos);
  EXPECT_NE(ptx.find("collective at line 9"), std::string::npos);
  // Masks are kept before the collective runs: an immediate, and a register.
  EXPECT_NE(ptx.find("mov.b32 %cwr7, -1;\n"), std::string::npos);
  EXPECT_NE(ptx.find("mov.b32 %cwr7, %r9;\n"), std::string::npos);
  // The shuffle also works out the lane it read (down: this lane + 16, clamped at 31), and a read of
  // a gone lane gets a loud value in place of the undefined one.
  EXPECT_NE(ptx.find("mov.b32 %cwb0, 16;\n\tmov.b32 %cwb1, 31;\n"), std::string::npos);
  EXPECT_NE(ptx.find("add.s32 %cwb6, %cwb2, %cwb0;"), std::string::npos);
  EXPECT_NE(ptx.find("@%cwp3 mov.b32 %r5, 0x7F7FFFFF;"), std::string::npos);
  // The lanes running the shuffle, read right after it: a returning lane is not among them even
  // before its gone mark is set.
  EXPECT_NE(ptx.find("-1;\n\tactivemask.b32 %cwa;"), std::string::npos);
  // A guarded collective counts only where it ran.
  EXPECT_NE(ptx.find("not.pred %cwp2, %p3;"), std::string::npos);
  // Leaves: the guarded early return (marked only where it leaves), the entry's last ret, and the
  // device function's exit; the device function's ret is a return, not a leave.
  std::size_t leaves = 0;
  for (auto at = ptx.find("this lane leaves"); at != std::string::npos;
       at = ptx.find("this lane leaves", at + 1))
    ++leaves;
  EXPECT_EQ(leaves, 3u);
  EXPECT_NE(ptx.find("@!%p1 bra $cudojo_warp_stay_0;"), std::string::npos);
}

TEST(PtxWarpCollectives, RefusesWhatItDoesNotUnderstand) {
  EXPECT_FALSE(instrument_ptx_warp_collectives(".version 9.0\n.target sm_90\n.address_size 32\n", 1));
}

TEST(PtxWarpCollectives, PtxasAcceptsTheCheckedModule) {
  auto checked = make_check_build(kPtx, 1);
  ASSERT_TRUE(checked.has_value());
  testing::expect_ptxas_accepts(checked->ptx);
}

}  // namespace
}  // namespace cudojo

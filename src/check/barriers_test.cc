#include "check/barriers.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

// Counts as the counted build leaves them for `blocks` blocks of `threads` threads where every
// thread passed `per_thread` barriers, all on `line`.
BarrierCounts uniform(std::uint32_t blocks, std::uint32_t threads, std::uint32_t per_thread, int line) {
  BarrierCounts counts;
  counts.threads_per_block = threads;
  counts.blocks = blocks;
  counts.passes_per_thread.assign(static_cast<std::size_t>(blocks) * threads, per_thread);
  counts.arrivals_per_line.assign(64, 0);
  counts.arrivals_per_line[line] = blocks * threads * per_thread;
  return counts;
}

TEST(Barriers, NoBarrierRanIsNotAFinding) { EXPECT_FALSE(divergent_barrier_finding(BarrierCounts{})); }

TEST(Barriers, EveryThreadAtEveryBarrierIsClean) {
  // A tree fold over 256 threads: one barrier after the load, eight in the loop.
  BarrierCounts counts = uniform(4, 256, 9, 12);
  counts.arrivals_per_line[12] = 4 * 256 * 8;
  counts.arrivals_per_line[8] = 4 * 256;
  EXPECT_FALSE(divergent_barrier_finding(counts));
}

TEST(Barriers, BarrierInsideTheFoldingBranchIsNamedWithItsLine) {
  // `if (tid < half) { ...; __syncthreads(); }` at line 12: thread t passes one barrier for
  // every half it is below, plus the uniform one at line 8.
  BarrierCounts counts = uniform(4, 256, 1, 8);
  for (std::uint32_t block = 0; block < 4; ++block) {
    for (std::uint32_t half = 128; half > 0; half /= 2) {
      for (std::uint32_t tid = 0; tid < half; ++tid) counts.passes_per_thread[block * 256 + tid] += 1;
      counts.arrivals_per_line[12] += half;
    }
  }
  const auto finding = divergent_barrier_finding(counts);
  ASSERT_TRUE(finding);
  EXPECT_EQ(finding->code, "divergent_barrier");
  ASSERT_TRUE(finding->line);
  EXPECT_EQ(*finding->line, 12);
  EXPECT_NE(finding->message.find("line 12"), std::string::npos) << finding->message;
  EXPECT_NE(finding->message.find("block 0, thread 0 passed 9 barriers"), std::string::npos)
      << finding->message;
}

TEST(Barriers, EarlyReturnBeforeABarrierIsDivergent) {
  // N = 1000 with 256-thread blocks: threads 1000..1023 leave before the barrier at line 9.
  BarrierCounts counts = uniform(4, 256, 1, 9);
  for (std::uint32_t t = 1000; t < 1024; ++t) counts.passes_per_thread[t] = 0;
  counts.arrivals_per_line[9] = 1000;
  const auto finding = divergent_barrier_finding(counts);
  ASSERT_TRUE(finding);
  EXPECT_EQ(finding->line, 9);
  EXPECT_NE(finding->message.find("block 3"), std::string::npos) << finding->message;
}

TEST(Barriers, AWholeBlockLeavingTogetherIsNotDivergent) {
  // Every thread of the last block returns before any barrier: each block is still uniform.
  BarrierCounts counts = uniform(4, 256, 2, 10);
  for (std::uint32_t t = 768; t < 1024; ++t) counts.passes_per_thread[t] = 0;
  counts.arrivals_per_line[10] = 3 * 256 * 2;
  EXPECT_FALSE(divergent_barrier_finding(counts));
}

TEST(Barriers, HalvesAtDifferentBarrierLinesAreDivergentEvenWithEqualCounts) {
  // if (tid < 128) { __syncthreads(); } else { __syncthreads(); } in one block: every thread
  // passed one barrier, but each line saw half a block.
  BarrierCounts counts = uniform(1, 256, 1, 5);
  counts.arrivals_per_line[5] = 128;
  counts.arrivals_per_line[7] = 128;
  const auto finding = divergent_barrier_finding(counts);
  ASSERT_TRUE(finding);
  EXPECT_EQ(finding->line, 5);
  EXPECT_NE(finding->message.find("not a multiple"), std::string::npos) << finding->message;
}

TEST(Barriers, ThreadsBeyondTheRecordedSlotsAreJudgedByTheirLinesOnly) {
  // Only the first block's per-thread counts were recorded; the lines still cover every block.
  BarrierCounts counts = uniform(8, 256, 1, 6);
  counts.passes_per_thread.resize(256);
  EXPECT_FALSE(divergent_barrier_finding(counts));
  counts.arrivals_per_line[6] -= 3;
  EXPECT_TRUE(divergent_barrier_finding(counts));
}

}  // namespace
}  // namespace cudojo

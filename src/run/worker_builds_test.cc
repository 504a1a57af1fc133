#include "run/worker_builds.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

Builds with_ptx(const std::string& ptx) {
  Builds builds;
  builds.submission.ok = true;
  builds.submission.ptx = ptx;
  return builds;
}

TEST(WorkerBuilds, SynccheckIsNeededOnlyWhereThePtxCanSynchronize) {
  EXPECT_FALSE(
      may_synchronize(with_ptx("ld.global.f32 %f1, [%rd1];\natom.global.add.f32 %f2, [%rd2], %f1;\n")));
  EXPECT_TRUE(may_synchronize(with_ptx("bar.sync 0;\n")));
  EXPECT_TRUE(may_synchronize(with_ptx("barrier.sync.aligned 0;\n")));
  EXPECT_TRUE(may_synchronize(with_ptx("shfl.sync.down.b32 %r2|%p1, %r1, 16, 31, -1;\n")));
  EXPECT_TRUE(may_synchronize(with_ptx("vote.sync.ballot.b32 %r1, %p1, -1;\n")));
  EXPECT_TRUE(may_synchronize(with_ptx("mbarrier.arrive.shared.b64 %rd1, [%r1];\n")));
  // A second kernel's PTX counts too.
  Builds two = with_ptx("add.s32 %r1, %r2, %r3;\n");
  two.second_submission.ok = true;
  two.second_submission.ptx = "bar.sync 0;\n";
  EXPECT_TRUE(may_synchronize(two));
  // A cubin without its PTX here: cannot tell, so synccheck runs.
  Builds cubin;
  cubin.submission.ok = true;
  cubin.submission.format = ImageFormat::kCubin;
  EXPECT_TRUE(may_synchronize(cubin));
}

TEST(WorkerBuilds, RacecheckIsNeededOnlyWhereThePtxHasSharedMemory) {
  EXPECT_FALSE(may_use_shared_memory(with_ptx("bar.sync 0;\nld.global.f32 %f1, [%rd1];\n")));
  EXPECT_TRUE(may_use_shared_memory(with_ptx(".shared .align 4 .b8 s[1024];\n")));
  EXPECT_TRUE(may_use_shared_memory(with_ptx(".extern .shared .align 16 .b8 dynamic[];\n")));
}

TEST(WorkerBuilds, TheDeviceHeapIsSeenInThePtx) {
  EXPECT_TRUE(uses_device_heap(with_ptx(".extern .func  (.param .b64 func_retval0) malloc\n(\n")));
  EXPECT_TRUE(uses_device_heap(with_ptx(".extern .func free\n(\n")));
  EXPECT_FALSE(uses_device_heap(with_ptx("// mallocs nothing\nld.global.f32 %f1, [%rd1];\n")));
}

}  // namespace
}  // namespace cudojo

// A kernel's resources without a GPU: ptxas's report read, the occupancy of a launch worked out as
// NVIDIA's calculator does, and a real ptxas run in the sandbox on NVRTC's PTX.
#include "compile/kernel_resources.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compile/compile_test_support.h"
#include "compile/nvrtc_compiler.h"
#include "compile/sandbox.h"

namespace cudojo {
namespace {

// As ptxas 13.0 prints it with -v, for a module of two entries.
constexpr const char* kPtxasLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'first' for 'sm_90'\n"
    "ptxas info    : Function properties for first\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem\n"
    "ptxas info    : Compiling entry function '_Z6secondPKfPfi' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z6secondPKfPfi\n"
    "    48 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 255 registers, 380 bytes cmem[0]\n";

TEST(KernelResources, PtxasReportIsReadEntryByEntry) {
  const auto kernels = parse_ptxas_verbose(kPtxasLog);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].kernel, "first");
  EXPECT_EQ(kernels[0].registers, 10);
  EXPECT_EQ(kernels[0].barriers, 1);
  EXPECT_EQ(kernels[0].shared_bytes, 1024);
  EXPECT_EQ(kernels[0].stack_frame_bytes, 0);
  EXPECT_EQ(kernels[1].kernel, "_Z6secondPKfPfi");
  EXPECT_EQ(kernels[1].registers, 255);
  EXPECT_EQ(kernels[1].barriers, 0);
  EXPECT_EQ(kernels[1].shared_bytes, 0);
  EXPECT_EQ(kernels[1].stack_frame_bytes, 48);
  EXPECT_EQ(kernels[1].spill_store_bytes, 8);
  EXPECT_EQ(kernels[1].spill_load_bytes, 12);
}

// Figures checked against NVIDIA's occupancy calculator for compute capability 9.0.
TEST(KernelResources, OccupancyIsLimitedByWhatRunsOutFirst) {
  KernelResources light;
  light.registers = 32;
  auto full = theoretical_occupancy("sm_90", 256, light, 0);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->blocks_per_sm, 8);
  EXPECT_EQ(full->active_warps, 64);
  EXPECT_DOUBLE_EQ(full->fraction, 1.0);

  KernelResources heavy;
  heavy.registers = 128;  // 4096 registers a warp: 16 warps of 64
  auto by_registers = theoretical_occupancy("sm_90", 256, heavy, 0);
  ASSERT_TRUE(by_registers);
  EXPECT_EQ(by_registers->blocks_per_sm, 2);
  EXPECT_EQ(by_registers->limited_by, "registers");
  EXPECT_DOUBLE_EQ(by_registers->fraction, 0.25);

  // 48 KiB of shared memory plus the 1 KiB the system keeps: 4 blocks in 228 KiB.
  auto by_shared = theoretical_occupancy("sm_90", 128, light, 48 * 1024);
  ASSERT_TRUE(by_shared);
  EXPECT_EQ(by_shared->blocks_per_sm, 4);
  EXPECT_EQ(by_shared->limited_by, "shared memory");

  KernelResources tiny;
  tiny.registers = 16;
  auto by_blocks = theoretical_occupancy("sm_90", 32, tiny, 0);
  ASSERT_TRUE(by_blocks);
  EXPECT_EQ(by_blocks->blocks_per_sm, 32);
  EXPECT_EQ(by_blocks->limited_by, "blocks");
  EXPECT_DOUBLE_EQ(by_blocks->fraction, 0.5);
}

TEST(KernelResources, AnUnknownArchitectureOrImpossibleLaunchSaysWhy) {
  std::string why;
  EXPECT_FALSE(theoretical_occupancy("sm_999", 256, {}, 0, &why));
  EXPECT_NE(why.find("sm_999"), std::string::npos);
  EXPECT_FALSE(theoretical_occupancy("sm_90", 2048, {}, 0, &why));
  EXPECT_NE(why.find("2048"), std::string::npos);
  EXPECT_FALSE(theoretical_occupancy("sm_90", 256, {}, 300 * 1024, &why));
  EXPECT_NE(why.find("shared memory"), std::string::npos);
}

TEST(KernelResources, PtxasInTheSandboxReportsNvrtcsModule) {
  // The toolkit's own, beside the include folder NVRTC compiles against.
  const std::string ptxas =
      (std::filesystem::path(default_cuda_include_dir()).parent_path() / "bin" / "ptxas").string();
  if (!std::filesystem::exists(ptxas)) GTEST_SKIP() << "no ptxas at " << ptxas;
  if (find_bubblewrap().empty()) GTEST_SKIP() << "no bubblewrap (scripts/setup.sh installs it)";
  const CompileResult compiled = compile_kernel(testing::kernel_request(
      "__global__ void reduce(const float* X, float* out, int N) {\n"
      "  __shared__ float partial[256];\n"
      "  partial[threadIdx.x] = X[threadIdx.x];\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x == 0) atomicAdd(out, partial[255]);\n"
      "}\n",
      "reduce", "const float* X, float* out, int N", "void (*)(const float*, float*, int)", "sm_90"));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const ResourceReport report = assemble_for_resources(compiled.ptx, "sm_90", ptxas);
  ASSERT_TRUE(report.ok) << report.error;
  ASSERT_EQ(report.kernels.size(), 1u);
  EXPECT_GT(report.kernels[0].registers, 0);
  EXPECT_EQ(report.kernels[0].shared_bytes, 1024);
  EXPECT_EQ(report.kernels[0].barriers, 1);
  // The cubin comes back for the disassembler: an ELF file.
  ASSERT_GT(report.cubin.size(), 4u);
  EXPECT_EQ(report.cubin.substr(0, 4), std::string("\x7f"
                                                   "ELF"));

  const ResourceReport refused = assemble_for_resources("this is not PTX", "sm_90", ptxas);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("ptxas refused"), std::string::npos) << refused.error;
}

}  // namespace
}  // namespace cudojo

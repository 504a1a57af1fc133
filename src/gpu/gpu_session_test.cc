// The judge's session on a real GPU. A kernel that plants itself (compile/ptx_planting.h): what a
// learner's kernel reads from shared memory it never wrote is the judge's pattern, in static arrays
// of any alignment and in the launch's dynamic window, and each armed launch takes the pattern it
// was armed with. A changed input is counted on the device. Skips, saying why, where there is no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "compile/compile_test_support.h"
#include "compile/nvrtc_compiler.h"
#include "compile/ptx_planting.h"
#include "gpu/gpu.h"

namespace cudojo {
namespace {

// Copies what it finds in shared memory it never writes: 64 words, 16 bytes, 16 dynamic words.
constexpr const char* kReadsUnwrittenShared =
    "__global__ void leak(const unsigned* X, unsigned* out, int N) {\n"
    "  __shared__ unsigned words[64];\n"
    "  __shared__ unsigned char bytes[16];\n"
    "  extern __shared__ unsigned dynamic[];\n"
    "  const unsigned t = threadIdx.x;\n"
    "  out[t] = words[t];\n"
    "  if (t < 16) out[64 + t] = bytes[t];\n"
    "  if (t < 16) out[80 + t] = dynamic[t];\n"
    "}\n";
constexpr int kOutputs = 64 + 16 + 16;

class GpuSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0)
      GTEST_SKIP() << "no CUDA device here (" << cudaGetErrorName(status)
                   << "); this test runs on a machine with an NVIDIA GPU (scripts/gpu-check.sh)";
  }
};

// Each byte read from the 16-byte array is the pattern's byte for its address: a run of the
// pattern's little-endian bytes, starting wherever the array happens to lie.
bool is_run_of_pattern_bytes(const std::uint32_t* got, std::uint32_t pattern) {
  for (int start = 0; start < 4; ++start) {
    bool all = true;
    for (int t = 0; t < 16; ++t) all &= got[t] == ((pattern >> (8 * ((start + t) % 4))) & 0xFFu);
    if (all) return true;
  }
  return false;
}

TEST_F(GpuSessionTest, UnwrittenSharedMemoryReadsAsTheArmedPatternInEveryArrayAndTheDynamicWindow) {
  GpuSession gpu(0, default_cuda_include_dir());
  const CompileResult compiled = compile_kernel(
      testing::kernel_request(kReadsUnwrittenShared, "leak", "const unsigned* X, unsigned* out, int N",
                              "void (*)(const unsigned*, unsigned*, int)", gpu.info().arch));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const auto planted = make_planted_build(compiled.ptx);
  ASSERT_TRUE(planted.has_value());
  std::vector<char> image(planted->ptx.begin(), planted->ptx.end());
  image.push_back('\0');
  const int dynamic_bytes = 16 * 4;
  LoadedKernel kernel(compiled.image, compiled.lowered_name, dynamic_bytes);
  kernel.plant_through(std::make_unique<LoadedKernel>(image, compiled.lowered_name, dynamic_bytes));
  gpu.plant_through({&kernel});
  ASSERT_TRUE(gpu.plants_through_kernels());

  DeviceBuffer<std::uint32_t> out(kOutputs);
  for (const float pattern : {-3.0f, 1099511627776.0f}) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &pattern, sizeof(bits));
    gpu.fill_async(out.get(), 0, out.bytes());
    gpu.poison_shared(pattern);
    const KernelArgument args[] = {KernelArgument::array(nullptr, 0, 4),
                                   KernelArgument::array(out.get(), kOutputs, 4), KernelArgument::scalar(0)};
    kernel.launch(dim3(1), dim3(64), dynamic_bytes, args, gpu.stream());
    gpu.sync_learner("the planted kernel");
    std::vector<std::uint32_t> got(kOutputs);
    gpu.download(got.data(), out.get(), out.bytes());
    for (int t = 0; t < 64; ++t) ASSERT_EQ(got[t], bits) << "word " << t << " under pattern " << pattern;
    EXPECT_TRUE(is_run_of_pattern_bytes(&got[64], bits)) << "bytes under pattern " << pattern;
    for (int t = 0; t < 16; ++t) ASSERT_EQ(got[80 + t], bits) << "dynamic word " << t;
  }
}

TEST_F(GpuSessionTest, WordsThatChangedAreCountedOnTheDeviceWithTheFirstOfThem) {
  GpuSession gpu(0, default_cuda_include_dir());
  const std::size_t words = (std::size_t{1} << 22) + 4096;
  std::vector<std::uint32_t> host(words);
  for (std::size_t i = 0; i < words; ++i) host[i] = static_cast<std::uint32_t>(i * 2654435761u);
  DeviceBuffer<std::uint32_t> before(words), now(words);
  gpu.upload(before.get(), host.data(), before.bytes());
  gpu.upload(now.get(), host.data(), now.bytes());
  auto same = gpu.count_changed_words(now.get(), before.get(), words);
  EXPECT_EQ(same.changed, 0);
  EXPECT_EQ(same.first, -1);
  // Three words changed, the last one in the guard region past N, and a NaN's bits count too.
  for (const std::size_t i : {std::size_t{77}, std::size_t{3000001}, words - 1}) {
    const std::uint32_t changed = host[i] ^ 0x7FC00001u;
    gpu.upload(now.get() + i, &changed, sizeof(changed));
  }
  auto three = gpu.count_changed_words(now.get(), before.get(), words);
  EXPECT_EQ(three.changed, 3);
  EXPECT_EQ(three.first, 77);
  // Only the first words compared: the change past them is not seen.
  auto prefix = gpu.count_changed_words(now.get(), before.get(), 3000001);
  EXPECT_EQ(prefix.changed, 1);
  EXPECT_EQ(prefix.first, 77);
}

}  // namespace
}  // namespace cudojo

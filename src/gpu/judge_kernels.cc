#include <fmt/format.h>

#include "compile/nvrtc_compiler.h"
#include "gpu/gpu.h"

namespace cudojo {

// The judge's helper kernels.
//   cudojo_poison_shared  one block per SM-sized allocation; each thread writes every blockDim-th
//                         word of the block's dynamic shared memory with the pattern.
//   cudojo_read_probe     grid-stride read of float4s, four independent loads in flight per thread;
//                         the sum is kept alive by a store that never happens on zero-filled input.
//   cudojo_noise          each thread adds to pseudo-random words of a 4 KiB scratch area for a
//                         pseudo-random number of rounds: SMs and the L2 stay busy, unevenly.
//   cudojo_count_changed  grid-stride comparison of two word arrays: counts the words that differ
//                         (result[0]) and keeps the lowest index among them (result[1], which
//                         starts at all ones).
const char* const kJudgeKernels = R"(
extern "C" __global__ void cudojo_poison_shared(float pattern, int words) {
  extern __shared__ float scratch[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) scratch[i] = pattern;
}

extern "C" __global__ void cudojo_read_probe(const float4* __restrict__ data, long long count,
                                             float* sink) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const float4 a = data[i], b = data[i + stride], c = data[i + 2 * stride], d = data[i + 3 * stride];
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) +
           (d.x + d.y + d.z + d.w);
  }
  for (; i < count; i += stride) {
    const float4 a = data[i];
    acc += a.x + a.y + a.z + a.w;
  }
  if (acc == -1.0f) *sink = acc;
}

extern "C" __global__ void cudojo_noise(unsigned int* scratch, unsigned int seed, int rounds) {
  unsigned int h = seed ^ (blockIdx.x * 0x9E3779B9u) ^ (threadIdx.x * 0x85EBCA6Bu);
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  const int count = rounds / 2 + (int)(h % (unsigned int)rounds);
  for (int i = 0; i < count; ++i) {
    h = h * 1664525u + 1013904223u;
    atomicAdd(&scratch[h >> 22], 1u);
  }
}

extern "C" __global__ void cudojo_count_changed(const unsigned int* now, const unsigned int* before,
                                                long long words, unsigned long long* result) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  unsigned long long changed = 0, first = ~0ull;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
    if (now[i] != before[i]) {
      if (changed == 0) first = (unsigned long long)i;
      ++changed;
    }
  }
  if (changed) {
    atomicAdd(&result[0], changed);
    atomicMin(&result[1], first);
  }
}
)";

std::vector<char> compile_judge_kernel(const std::string& source, const std::string& symbol,
                                       const std::string& arch, const std::string& cuda_include_dir,
                                       std::string& lowered) {
  CompileRequest request;
  request.source = source;
  request.file_name = "cudojo_judge.cu";
  request.kernel_name = symbol;
  request.kernel_parameters = "";
  request.kernel_pointer_type =
      symbol == "cudojo_poison_shared" ? "void (*)(float, int)"
      : symbol == "cudojo_noise"       ? "void (*)(unsigned int*, unsigned int, int)"
      : symbol == "cudojo_count_changed"
          ? "void (*)(const unsigned int*, const unsigned int*, long long, unsigned long long*)"
          : "void (*)(const float4*, long long, float*)";
  request.arch = arch;
  request.cuda_include_dir = cuda_include_dir;
  CompileResult result = compile_kernel(request);
  if (!result.ok) throw std::runtime_error("the judge's own kernel did not compile:\n" + result.log);
  lowered = result.lowered_name;
  return result.image;
}

}  // namespace cudojo

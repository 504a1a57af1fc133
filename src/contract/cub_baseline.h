// CUB's DeviceReduce::Sum, the library baseline some stages are gated against (gate.rule =
// baseline_ratio): the learner's kernel and CUB sum the same array in the same timing rotation.
// Compiled by nvcc (cub_baseline.cu); plain C++ callers see only these functions.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace cudojo {

// Temporary storage CUB needs to sum up to `max_n` floats.
std::size_t cub_sum_scratch_bytes(std::size_t max_n);
// Enqueues *out = sum of x[0..n) on `stream`; errors surface at the caller's next synchronization.
void launch_cub_sum(const float* x, float* out, std::size_t n, void* scratch, std::size_t scratch_bytes,
                    cudaStream_t stream);

}  // namespace cudojo

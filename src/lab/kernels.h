// The lab's kernels, compiled by nvcc (kernels.cu) and called from plain C++. Each launcher
// enqueues on `stream` and returns at once; errors surface at the caller's next synchronization.
// Pointers are device pointers; shapes in comments.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string_view>

namespace cudojo::lab {

// ---- race ----
void launch_increment_plain(int* counter, int blocks, int threads, cudaStream_t stream);
void launch_increment_atomic(int* counter, int blocks, int threads, cudaStream_t stream);

// ---- contention: 256-bin histograms of `values` (n,) into `bins` (256,) ----
enum class HistogramKind { kGlobalAtomics, kSharedPrivatized, kWarpAggregated };
void launch_histogram(HistogramKind kind, const unsigned* values, unsigned* bins, int n, int sm_count,
                      cudaStream_t stream);

// ---- sums of X (n,) into *out (or a two-pass scratch) ----
enum class SumStrategy {
  kGlobalAtomic,          // one atomicAdd per element into one float
  kSharedAtomic,          // per element into a shared float, one global atomic per block
  kTreeAtomic,            // shared-memory tree per block, one global atomic per block
  kWarpAtomic,            // warp shuffle, one global atomic per warp
  kTwoPass,               // warp-shuffle block partials, then one block adds them in a fixed order
  kVectorizedSinglePass,  // persistent grid, float4 loads, 4 in flight, one atomic per block
  kCub,                   // cub::DeviceReduce::Sum
};
std::string_view to_string(SumStrategy strategy);
// Whether the strategy accumulates into *out (which must then be zeroed before each launch).
bool accumulates(SumStrategy strategy);

// Scratch for kTwoPass (one partial per block) and kCub (its temporary storage), sized once for
// the largest n; owned by the caller.
std::size_t sum_scratch_bytes(std::size_t max_n);
void launch_sum(SumStrategy strategy, const float* x, float* out, std::size_t n, void* scratch,
                std::size_t scratch_bytes, int sm_count, cudaStream_t stream);

// ---- precision: compensated (Kahan) sum on the device ----
// Each of 256 x 256 threads Kahan-sums a contiguous chunk into (sum, compensation) pairs, then one
// thread Kahan-combines the pairs in order. `scratch` holds 2 x 65536 floats.
void launch_kahan_sum(const float* x, float* out, std::size_t n, float* scratch, cudaStream_t stream);

// ---- float max under contention; *result must start at -infinity ----
enum class FloatMaxKind { kCompareAndSwap, kIntegerOrdering };
void launch_float_max(FloatMaxKind kind, const float* x, float* result, int n, cudaStream_t stream);

}  // namespace cudojo::lab

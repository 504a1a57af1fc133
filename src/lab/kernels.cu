// The lab's kernels: what one thread, one warp and one block do, and each launch's assumptions.
// Built with nvcc for the GPUs listed in CMAKE_CUDA_ARCHITECTURES (sm_90 by default).
#include <algorithm>
#include <cmath>
#include <cub/device/device_reduce.cuh>

#include "lab/kernels.h"

namespace cudojo::lab {

namespace {

constexpr int kThreads = 256;  // every lab kernel but the vectorized one uses 256-thread blocks
constexpr unsigned kFullMask = 0xffffffffu;

// ================================ race ================================

// One thread: load, add one, store. Thousands of threads interleave those three steps.
__global__ void increment_plain(int* counter) { *counter = *counter + 1; }
// One thread: one indivisible read-modify-write.
__global__ void increment_atomic(int* counter) { atomicAdd(counter, 1); }

// ============================= contention =============================

// One thread: one element, one global atomic on its bin. Launch: ceil(n / 256) blocks.
__global__ void histogram_global(const unsigned* values, unsigned* bins, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[values[i] % 256], 1u);
}

// One block: a private 256-bin histogram in shared memory over a grid-stride slice, merged with
// 256 global atomics at the end. Launch: a few blocks per SM, 256 threads (one bin each).
__global__ void histogram_shared(const unsigned* values, unsigned* bins, int n) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[values[i] % 256], 1u);
  }
  __syncthreads();
  if (local[threadIdx.x] != 0) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

// One warp: lanes holding the same bin elect a leader (__match_any_sync), and the leader adds the
// group's size, so a warp whose 32 values share a bin makes one atomic instead of 32.
__global__ void histogram_warp_aggregated(const unsigned* values, unsigned* bins, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = i < n;
  const unsigned bin = active ? values[i] % 256 : 256u;  // 256: a bin no real value has
  const unsigned same = __match_any_sync(kFullMask, bin);
  const int leader = __ffs(same) - 1;
  if (active && (threadIdx.x % 32) == leader) atomicAdd(&bins[bin], static_cast<unsigned>(__popc(same)));
}

// ================================ sums ================================

__device__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(kFullMask, value, offset);
  return value;
}

// The block's sum in lane 0 of warp 0 (every thread must call it; blockDim.x a multiple of 32).
__device__ float block_sum(float value) {
  __shared__ float warp_sums[32];
  value = warp_sum(value);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
  __syncthreads();
  value = (threadIdx.x < blockDim.x / 32) ? warp_sums[threadIdx.x] : 0.0f;
  if (threadIdx.x < 32) value = warp_sum(value);
  return value;
}

__global__ void sum_global_atomic(const float* x, float* out, size_t n) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}

// The barriers are reached by every thread; guards cover only the loads and the atomics.
__global__ void sum_shared_atomic(const float* x, float* out, size_t n) {
  __shared__ float block_total;
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (threadIdx.x == 0) block_total = 0.0f;
  __syncthreads();
  if (i < n) atomicAdd(&block_total, x[i]);
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(out, block_total);
}

__global__ void sum_tree_atomic(const float* x, float* out, size_t n) {
  __shared__ float slots[kThreads];
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  slots[threadIdx.x] = (i < n) ? x[i] : 0.0f;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) slots[threadIdx.x] += slots[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, slots[0]);
}

__global__ void sum_warp_atomic(const float* x, float* out, size_t n) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  const float total = warp_sum((i < n) ? x[i] : 0.0f);
  if (threadIdx.x % 32 == 0) atomicAdd(out, total);
}

// First pass: partial[b] = block b's sum (no atomics, so the result does not depend on order).
__global__ void sum_block_partials(const float* x, float* partial, size_t n) {
  const size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  const float total = block_sum((i < n) ? x[i] : 0.0f);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// Second pass, one block: each thread adds a fixed strided set of partials, then one block fold.
__global__ void sum_partials(const float* partial, float* out, size_t count) {
  float value = 0.0f;
  for (size_t k = threadIdx.x; k < count; k += blockDim.x) value += partial[k];
  value = block_sum(value);
  if (threadIdx.x == 0) *out = value;
}

// Grid-stride over float4s: each thread keeps four independent 16-byte loads in flight per
// iteration and one running sum, then the block folds and makes one atomic. The scalar tail
// (n not a multiple of 4) is read by block 0. Launch: just enough 512-thread blocks for every
// thread to have its four loads (at most 4 per SM), so small sums make few atomics and large ones
// a persistent grid; x must be 16-byte aligned (cudaMalloc gives 256).
constexpr int kVectorThreads = 512;
__global__ void __launch_bounds__(kVectorThreads) sum_vectorized(const float* x, float* out, size_t n) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const size_t n4 = n / 4;
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  float acc = 0.0f;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    const float4 a = x4[i], b = x4[i + stride], c = x4[i + 2 * stride], d = x4[i + 3 * stride];
    acc += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) + ((c.x + c.y) + (c.z + c.w)) +
           ((d.x + d.y) + (d.z + d.w));
  }
  for (; i < n4; i += stride) {
    const float4 a = x4[i];
    acc += (a.x + a.y) + (a.z + a.w);
  }
  if (blockIdx.x == 0 && threadIdx.x < n % 4) acc += x[n4 * 4 + threadIdx.x];
  acc = block_sum(acc);
  if (threadIdx.x == 0) atomicAdd(out, acc);
}

// ============================== precision ==============================

constexpr int kKahanThreads = 256 * 256;

// One thread: a compensated sum over its own contiguous chunk.
__global__ void kahan_chunks(const float* x, size_t n, float* sums, float* compensations) {
  const size_t t = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  const size_t chunk = (n + kKahanThreads - 1) / kKahanThreads;
  const size_t begin = t * chunk;
  const size_t end = begin + chunk < n ? begin + chunk : n;
  float sum = 0.0f, c = 0.0f;
  for (size_t i = begin; i < end; ++i) {
    const float y = x[i] - c;
    const float total = sum + y;
    c = (total - sum) - y;
    sum = total;
  }
  sums[t] = sum;
  compensations[t] = c;
}

// One thread: combines the chunk results in order, carrying compensation across them.
__global__ void kahan_combine(const float* sums, const float* compensations, float* out) {
  float sum = 0.0f, c = 0.0f;
  for (int t = 0; t < kKahanThreads; ++t) {
    const float y = (sums[t] - compensations[t]) - c;
    const float total = sum + y;
    c = (total - sum) - y;
    sum = total;
  }
  *out = sum;
}

// ============================== float max ==============================

// NaN inputs are ignored in both versions (as fmaxf does), so one NaN cannot poison a maximum.

// Retry until our value is installed or something at least as large is already there. ±0 compare
// equal here, so with both present either may remain.
__device__ void atomic_max_cas(float* address, float value) {
  if (isnan(value)) return;
  int* bits = reinterpret_cast<int*>(address);
  int seen = *bits;
  while (__int_as_float(seen) < value) {
    const int previous = atomicCAS(bits, seen, __float_as_int(value));
    if (previous == seen) return;
    seen = previous;
  }
}

// Non-negative floats order like their bits as signed ints; negative floats order in reverse as
// unsigned ints. So a non-negative value needs a signed max, a negative one an unsigned min. -0.0
// (0x80000000) is the smallest negative bit pattern, and +0.0 beats it as a signed int: +0.0 wins.
__device__ void atomic_max_ordered(float* address, float value) {
  if (isnan(value)) return;
  if (!signbit(value)) {
    atomicMax(reinterpret_cast<int*>(address), __float_as_int(value));
  } else {
    atomicMin(reinterpret_cast<unsigned*>(address), __float_as_uint(value));
  }
}

__global__ void float_max_cas(const float* x, float* result, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_max_cas(result, x[i]);
}

__global__ void float_max_ordered(const float* x, float* result, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomic_max_ordered(result, x[i]);
}

unsigned blocks_for(size_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

void launch_increment_plain(int* counter, int blocks, int threads, cudaStream_t stream) {
  increment_plain<<<blocks, threads, 0, stream>>>(counter);
}

void launch_increment_atomic(int* counter, int blocks, int threads, cudaStream_t stream) {
  increment_atomic<<<blocks, threads, 0, stream>>>(counter);
}

void launch_histogram(HistogramKind kind, const unsigned* values, unsigned* bins, int n, int sm_count,
                      cudaStream_t stream) {
  switch (kind) {
    case HistogramKind::kGlobalAtomics:
      histogram_global<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(values, bins, n);
      break;
    case HistogramKind::kSharedPrivatized:
      histogram_shared<<<sm_count * 4, kThreads, 0, stream>>>(values, bins, n);
      break;
    case HistogramKind::kWarpAggregated:
      histogram_warp_aggregated<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(values, bins, n);
      break;
  }
}

std::string_view to_string(SumStrategy strategy) {
  switch (strategy) {
    case SumStrategy::kGlobalAtomic:
      return "global_atomic";
    case SumStrategy::kSharedAtomic:
      return "shared_atomic";
    case SumStrategy::kTreeAtomic:
      return "tree_atomic";
    case SumStrategy::kWarpAtomic:
      return "warp_atomic";
    case SumStrategy::kTwoPass:
      return "two_pass";
    case SumStrategy::kVectorizedSinglePass:
      return "vectorized";
    case SumStrategy::kCub:
      return "cub";
  }
  return "?";
}

bool accumulates(SumStrategy strategy) {
  return strategy != SumStrategy::kTwoPass && strategy != SumStrategy::kCub;
}

std::size_t sum_scratch_bytes(std::size_t max_n) {
  std::size_t cub_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, cub_bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                         static_cast<long long>(max_n));
  const std::size_t partial_bytes = blocks_for(max_n, kThreads) * sizeof(float);
  return cub_bytes > partial_bytes ? cub_bytes : partial_bytes;
}

void launch_sum(SumStrategy strategy, const float* x, float* out, std::size_t n, void* scratch,
                std::size_t scratch_bytes, int sm_count, cudaStream_t stream) {
  const unsigned blocks = blocks_for(n, kThreads);
  switch (strategy) {
    case SumStrategy::kGlobalAtomic:
      sum_global_atomic<<<blocks, kThreads, 0, stream>>>(x, out, n);
      break;
    case SumStrategy::kSharedAtomic:
      sum_shared_atomic<<<blocks, kThreads, 0, stream>>>(x, out, n);
      break;
    case SumStrategy::kTreeAtomic:
      sum_tree_atomic<<<blocks, kThreads, 0, stream>>>(x, out, n);
      break;
    case SumStrategy::kWarpAtomic:
      sum_warp_atomic<<<blocks, kThreads, 0, stream>>>(x, out, n);
      break;
    case SumStrategy::kTwoPass: {
      float* partial = static_cast<float*>(scratch);
      sum_block_partials<<<blocks, kThreads, 0, stream>>>(x, partial, n);
      sum_partials<<<1, 1024, 0, stream>>>(partial, out, blocks);
      break;
    }
    case SumStrategy::kVectorizedSinglePass: {
      const std::size_t wanted = (n / 4 + 4 * kVectorThreads - 1) / (4 * kVectorThreads);
      const unsigned grid =
          static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, 4 * std::size_t(sm_count)));
      sum_vectorized<<<grid, kVectorThreads, 0, stream>>>(x, out, n);
      break;
    }
    case SumStrategy::kCub: {
      std::size_t bytes = scratch_bytes;
      cub::DeviceReduce::Sum(scratch, bytes, x, out, static_cast<long long>(n), stream);
      break;
    }
  }
}

void launch_kahan_sum(const float* x, float* out, std::size_t n, float* scratch, cudaStream_t stream) {
  kahan_chunks<<<256, 256, 0, stream>>>(x, n, scratch, scratch + kKahanThreads);
  kahan_combine<<<1, 1, 0, stream>>>(scratch, scratch + kKahanThreads, out);
}

void launch_float_max(FloatMaxKind kind, const float* x, float* result, int n, cudaStream_t stream) {
  if (kind == FloatMaxKind::kCompareAndSwap) {
    float_max_cas<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(x, result, n);
  } else {
    float_max_ordered<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(x, result, n);
  }
}

}  // namespace cudojo::lab

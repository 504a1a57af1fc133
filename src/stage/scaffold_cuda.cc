// The CUDA C++ reference kernels `cudojo stage new` writes, one per contract: correct, plain, and
// written for any launch the stage file may set (grid-stride loops, whole warps), so a new stage
// passes `cudojo course check` at once and is accepted on a GPU. Each opens with what one thread,
// one warp and one block do, as the course's own references do; @ID@ becomes the stage's id.
// src/cli/course_commands_test.cc scaffolds every contract and compiles them all.
#include "stage/scaffold_templates.h"

namespace cudojo {

namespace {

// ---- counter

constexpr std::string_view kCounter =
    R"cudojo(// Reference for @ID@: every thread adds one to *c in one indivisible read-modify-write.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).
__global__ void count(int* c) {
    atomicAdd(c, 1);
}
)cudojo";

// ---- one_accumulator

constexpr std::string_view kOneAccumulator =
    R"cudojo(// Reference for @ID@: each thread sums its grid-stride share of X, each warp folds its 32 sums
// with shuffles, and lane 0 adds the warp's total to *out with one atomicAdd.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

__global__ void reduce(const float* X, float* out, int N) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) sum += X[i];
    sum = warp_fold(sum);
    if (threadIdx.x % 32 == 0) atomicAdd(out, sum);
}
)cudojo";

// ---- partial_per_block

constexpr std::string_view kPartialPerBlock =
    R"cudojo(// Reference for @ID@: each warp folds its 32 values with shuffles, the warps' sums meet in shared
// memory, and warp 0 folds them into partial[blockIdx.x] (a store: partial[] starts poisoned).
// Launch assumption: ceil(N / blockDim.x) blocks; blockDim.x a multiple of 32, at most 1024.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

__global__ void block_sum(const float* X, float* partial, int N) {
    __shared__ float warp_sums[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float value = warp_fold(i < N ? X[i] : 0.0f);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();  // every warp's sum is in before warp 0 reads them
    if (warp == 0) {
        value = warp_fold(lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0) partial[blockIdx.x] = value;
    }
}
)cudojo";

// ---- two_kernel_sum

constexpr std::string_view kTwoKernelSum =
    R"cudojo(// Reference for @ID@: a sum with no float atomics, so every run adds in the same order.
// block_partials: each block sums its grid-stride share of X and stores it in partial[blockIdx.x].
// fold_partials (one block): thread t adds partial[t], partial[t + blockDim.x], ... in that order,
// then the same block fold; thread 0 stores *out. Both start from poisoned memory: store, never add.
// Launch assumption: blockDim.x a multiple of 32, at most 1024.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

// The block's total, valid in thread 0. Every thread of the block calls it (it holds a barrier).
__device__ float block_fold(float value) {
    __shared__ float warp_sums[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value = warp_fold(value);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    if (warp == 0) value = warp_fold(lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f);
    return value;
}

__global__ void block_partials(const float* X, float* partial, int N) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) sum += X[i];
    sum = block_fold(sum);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

__global__ void fold_partials(const float* partial, float* out, int count) {
    float sum = 0.0f;
    for (int k = threadIdx.x; k < count; k += blockDim.x) sum += partial[k];
    sum = block_fold(sum);
    if (threadIdx.x == 0) *out = sum;
}
)cudojo";

// ---- u64_sum

constexpr std::string_view kU64Sum =
    R"cudojo(// Reference for @ID@: each thread sums its grid-stride share of X in 64 bits (two values can pass
// 2^32 already), each warp folds its sums with 64-bit shuffles, and lane 0 adds the warp's total to
// *out with one 64-bit atomicAdd.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
__device__ unsigned long long warp_fold(unsigned long long value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

__global__ void sum_u32(const unsigned int* X, unsigned long long* out, int N) {
    unsigned long long sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) sum += X[i];
    sum = warp_fold(sum);
    if (threadIdx.x % 32 == 0) atomicAdd(out, sum);
}
)cudojo";

// ---- histogram

constexpr std::string_view kHistogram =
    R"cudojo(// Reference for @ID@: each thread counts its grid-stride share of values, one atomicAdd on the
// global bin of each value (bins[v % 256]), so no two threads' increments of one bin are lost.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[values[i] % 256], 1u);
    }
}
)cudojo";

// ---- float_max

constexpr std::string_view kFloatMax =
    R"cudojo(// Reference for @ID@: a float atomic max from atomicCAS under the contract's rule (NaN is
// skipped, +0.0 ranks above -0.0). Each thread keeps the largest of its grid-stride share, each warp
// folds with shuffles, and lane 0 makes the warp's one CAS loop on *out.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Does `candidate` beat `current` under the rule? Neither is NaN here. Equal floats with other
// bits are -0.0 and +0.0: the sign bit decides.
__device__ bool beats(float candidate, float current) {
    if (candidate > current) return true;
    return candidate == current && (__float_as_uint(current) >> 31) != 0 &&
           (__float_as_uint(candidate) >> 31) == 0;
}

// Read, decide, try to swap; if another thread got there first, decide again against its value.
__device__ void atomic_max_by_rule(float* address, float value) {
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    unsigned int seen = *word;
    while (beats(value, __uint_as_float(seen))) {
        const unsigned int before = atomicCAS(word, seen, __float_as_uint(value));
        if (before == seen) return;
        seen = before;
    }
}

__global__ void max_value(const float* X, float* out, int N) {
    float best = __uint_as_float(0xff800000u);  // -infinity, the driver's starting *out
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        const float value = X[i];
        if (!isnan(value) && beats(value, best)) best = value;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_down_sync(0xffffffffu, best, offset);
        if (beats(other, best)) best = other;
    }
    if (threadIdx.x % 32 == 0) atomic_max_by_rule(out, best);
}
)cudojo";

}  // namespace

std::string_view cuda_reference_template(std::string_view contract) {
  if (contract == "counter") return kCounter;
  if (contract == "one_accumulator") return kOneAccumulator;
  if (contract == "partial_per_block") return kPartialPerBlock;
  if (contract == "two_kernel_sum") return kTwoKernelSum;
  if (contract == "u64_sum") return kU64Sum;
  if (contract == "histogram") return kHistogram;
  if (contract == "float_max") return kFloatMax;
  return {};
}

}  // namespace cudojo

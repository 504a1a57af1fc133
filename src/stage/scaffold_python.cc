// The Python (Numba) reference kernels `cudojo stage new` writes, one per
// contract: correct, plain, and written for any launch the stage file may set (grid-stride loops,
// whole warps), so a new stage passes `cudojo course check` at once and is accepted on a GPU. Each
// opens with what one thread, one warp and one block do, as the course's own references do; @ID@
// becomes the stage's id. src/cli/course_commands_test.cc scaffolds every contract and compiles them.
#include "stage/scaffold_templates.h"

namespace cudojo {

namespace {

// ---- counter

constexpr std::string_view kCounter =
    R"cudojo(# Reference for @ID@: every thread adds one to c[0] in one indivisible read-modify-write.
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
from numba import cuda


@cuda.jit
def count(c):
    cuda.atomic.add(c, 0, 1)
)cudojo";

// ---- one_accumulator

constexpr std::string_view kOneAccumulator =
    R"cudojo(# Reference for @ID@: each thread sums its grid-stride share of X, each warp folds its 32 sums
# with shuffles, and lane 0 adds the warp's total to out[0] with one atomic add.
# Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit(device=True)
def warp_fold(value):
    # Lane 0 ends with the sum of its warp's 32 values.
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit
def reduce(X, out, N):
    total = float32(0.0)  # float32, not 0.0: a Python float is float64 and would widen the sum
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        total += X[i]
        i += stride
    total = warp_fold(total)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, total)
)cudojo";

// ---- partial_per_block

constexpr std::string_view kPartialPerBlock =
    R"cudojo(# Reference for @ID@: each warp folds its 32 values with shuffles, the warps' sums meet in shared
# memory, and warp 0 folds them into partial[blockIdx.x] (a store: partial[] starts poisoned).
# Launch assumption: ceil(N / blockDim.x) blocks; blockDim.x a multiple of 32, at most 1024.
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit(device=True)
def warp_fold(value):
    # Lane 0 ends with the sum of its warp's 32 values.
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit
def block_sum(X, partial, N):
    warp_sums = cuda.shared.array(32, dtype=float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    value = warp_fold(X[i] if i < N else float32(0.0))
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()  # every warp's sum is in before warp 0 reads them
    if warp == 0:
        value = warp_fold(warp_sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0))
        if lane == 0:
            partial[cuda.blockIdx.x] = value
)cudojo";

// ---- two_kernel_sum

constexpr std::string_view kTwoKernelSum =
    R"cudojo(# Reference for @ID@: a sum with no float atomics, so every run adds in the same order.
# block_partials: each block sums its grid-stride share of X and stores it in partial[blockIdx.x].
# fold_partials (one block): thread t adds partial[t], partial[t + blockDim.x], ... in that order,
# then the same block fold; thread 0 stores out[0]. Both start from poisoned memory: store, never add.
# Launch assumption: blockDim.x a multiple of 32, at most 1024.
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit(device=True)
def warp_fold(value):
    # Lane 0 ends with the sum of its warp's 32 values.
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit(device=True)
def block_fold(value, warp_sums):
    # The block's total, valid in thread 0. Every thread of the block calls it (it holds a barrier).
    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    value = warp_fold(value)
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()
    if warp == 0:
        value = warp_fold(warp_sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0))
    return value


@cuda.jit
def block_partials(X, partial, N):
    warp_sums = cuda.shared.array(32, dtype=float32)
    total = float32(0.0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        total += X[i]
        i += stride
    total = block_fold(total, warp_sums)
    if cuda.threadIdx.x == 0:
        partial[cuda.blockIdx.x] = total


@cuda.jit
def fold_partials(partial, out, count):
    warp_sums = cuda.shared.array(32, dtype=float32)
    total = float32(0.0)
    k = cuda.threadIdx.x
    while k < count:
        total += partial[k]
        k += cuda.blockDim.x
    total = block_fold(total, warp_sums)
    if cuda.threadIdx.x == 0:
        out[0] = total
)cudojo";

// ---- u64_sum

constexpr std::string_view kU64Sum =
    R"cudojo(# Reference for @ID@: each thread sums its grid-stride share of X in 64 bits (two values can pass
# 2^32 already), each warp folds its sums with 64-bit shuffles, and lane 0 adds the warp's total to
# out[0] with one 64-bit atomic add.
# Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
from numba import cuda, int64, uint64

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit(device=True)
def warp_fold(value):
    # Lane 0 ends with the sum of its warp's 32 values. A uint64 would be shuffled as a float64
    # (rounded past 2^53); int64 has the same bits and travels unchanged.
    offset = 16
    while offset > 0:
        value += uint64(cuda.shfl_down_sync(FULL_MASK, int64(value), offset))
        offset //= 2
    return value


@cuda.jit
def sum_u32(X, out, N):
    total = uint64(0)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        total += uint64(X[i])
        i += stride
    total = warp_fold(total)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, total)
)cudojo";

// ---- histogram

constexpr std::string_view kHistogram =
    R"cudojo(# Reference for @ID@: each thread counts its grid-stride share of values, one atomic add on the
# global bin of each value (bins[v % 256]), so no two threads' increments of one bin are lost.
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
from numba import cuda, uint32


@cuda.jit
def histogram(values, bins, N):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        cuda.atomic.add(bins, values[i] % 256, uint32(1))  # uint32(1) keeps the add in the bins' type
        i += stride
)cudojo";

// ---- float_max

constexpr std::string_view kFloatMax =
    R"cudojo(# Reference for @ID@: a float atomic max from compare_and_swap under the contract's rule (NaN is
# skipped, +0.0 ranks above -0.0). Each thread keeps the largest of its grid-stride share, each warp
# folds with shuffles, and lane 0 makes the warp's one CAS loop on out[0].
# Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
# compare_and_swap takes integer arrays, so the kernel works on the floats' bits (X.view(uint32))
# and compares them through order_key(), which orders bits as the rule orders floats.
# TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
# time_ratio gate, learners are timed against it).
import math

from numba import cuda, int32, uint32

FULL_MASK = 0xFFFFFFFF
SIGN_BIT = 0x80000000
ALL_BITS = 0xFFFFFFFF
MINUS_INFINITY_BITS = 0xFF800000  # the driver's starting out[0]


@cuda.jit(device=True)
def order_key(bits):
    # Non-negative floats order like their bits, lifted above every negative by the top bit;
    # negative ones order backwards, so all their bits flip. -0.0 lands one below +0.0.
    if bits & SIGN_BIT:
        return uint32(bits ^ ALL_BITS)
    return uint32(bits | SIGN_BIT)


@cuda.jit
def max_value(X, out, N):
    x_bits = X.view(uint32)
    out_bits = out.view(uint32)
    best = uint32(MINUS_INFINITY_BITS)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < N:
        if not math.isnan(X[i]) and order_key(x_bits[i]) > order_key(best):
            best = x_bits[i]
        i += stride

    offset = 16
    while offset > 0:
        # int32 in and out: the 32-bit shuffle, the same bits.
        other = uint32(cuda.shfl_down_sync(FULL_MASK, int32(best), offset))
        if order_key(other) > order_key(best):
            best = other
        offset //= 2

    if cuda.laneid == 0:
        seen = out_bits[0]
        while order_key(best) > order_key(seen):
            before = cuda.atomic.compare_and_swap(out_bits, seen, best)
            if before == seen:
                break
            seen = before
)cudojo";

}  // namespace

std::string_view python_reference_template(std::string_view contract) {
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

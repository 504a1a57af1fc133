// The Rust (nvptx64, the cudojo prelude) reference kernels `cudojo stage new` writes, one per
// contract: correct, plain, and written for any launch the stage file may set (grid-stride loops,
// whole warps), so a new stage passes `cudojo course check` at once and is accepted on a GPU. Each
// opens with what one thread, one warp and one block do, as the course's own references do; @ID@
// becomes the stage's id. src/cli/course_commands_test.cc scaffolds every contract and compiles them.
#include "stage/scaffold_templates.h"

namespace cudojo {

namespace {

// ---- counter

constexpr std::string_view kCounter =
    R"cudojo(// Reference for @ID@: every thread adds one to *c in one indivisible read-modify-write.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).
#[kernel]
fn count(c: *mut i32) {
    atomic_add_i32(c, 1);
}
)cudojo";

// ---- one_accumulator

constexpr std::string_view kOneAccumulator =
    R"cudojo(// Reference for @ID@: each thread sums its grid-stride share of x, each warp folds its 32 sums
// with shuffles, and lane 0 adds the warp's total to *out with one atomic add.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
fn warp_fold(mut value: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_sync(FULL_MASK, value, offset);
        offset /= 2;
    }
    value
}

#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut sum = 0.0f32;
    while i < n {
        sum += *x.add(i as usize);
        i += stride;
    }
    sum = warp_fold(sum);
    if lane_id() == 0 {
        atomic_add_f32(out, sum);
    }
}
)cudojo";

// ---- partial_per_block

constexpr std::string_view kPartialPerBlock =
    R"cudojo(// Reference for @ID@: each warp folds its 32 values with shuffles, the warps' sums meet in shared
// memory, and warp 0 folds them into partial[block] (a store: partial[] starts poisoned).
// Launch assumption: ceil(n / blockDim.x) blocks; blockDim.x a multiple of 32, at most 1024.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
fn warp_fold(mut value: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_sync(FULL_MASK, value, offset);
        offset /= 2;
    }
    value
}

#[kernel]
fn block_sum(x: *const f32, partial: *mut f32, n: i32) {
    let warp_sums = shared_array!(f32; 32);
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let lane = thread_idx_x() % 32;
    let warp = thread_idx_x() / 32;
    let mut value = warp_fold(if i < n { *x.add(i as usize) } else { 0.0 });
    if lane == 0 {
        *warp_sums.add(warp as usize) = value;
    }
    sync_threads(); // every warp's sum is in before warp 0 reads them
    if warp == 0 {
        value = warp_fold(if lane < block_dim_x() / 32 { *warp_sums.add(lane as usize) } else { 0.0 });
        if lane == 0 {
            *partial.add(block_idx_x() as usize) = value;
        }
    }
}
)cudojo";

// ---- two_kernel_sum

constexpr std::string_view kTwoKernelSum =
    R"cudojo(// Reference for @ID@: a sum with no float atomics, so every run adds in the same order.
// block_partials: each block sums its grid-stride share of x and stores it in partial[block].
// fold_partials (one block): thread t adds partial[t], partial[t + blockDim.x], ... in that order,
// then the same block fold; thread 0 stores *out. Both start from poisoned memory: store, never add.
// Launch assumption: blockDim.x a multiple of 32, at most 1024.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Lane 0 ends with the sum of its warp's 32 values.
fn warp_fold(mut value: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_sync(FULL_MASK, value, offset);
        offset /= 2;
    }
    value
}

// The block's total, valid in thread 0. Every thread of the block calls it (it holds a barrier);
// warp_sums points to 32 floats of shared memory.
unsafe fn block_fold(value: f32, warp_sums: *mut f32) -> f32 {
    let lane = lane_id();
    let warp = thread_idx_x() / 32;
    let mut value = warp_fold(value);
    if lane == 0 {
        unsafe { *warp_sums.add(warp as usize) = value };
    }
    sync_threads();
    if warp == 0 {
        value = warp_fold(if lane < block_dim_x() / 32 { unsafe { *warp_sums.add(lane as usize) } } else { 0.0 });
    }
    value
}

#[kernel]
fn block_partials(x: *const f32, partial: *mut f32, n: i32) {
    let warp_sums = shared_array!(f32; 32);
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut sum = 0.0f32;
    while i < n {
        sum += *x.add(i as usize);
        i += stride;
    }
    let total = block_fold(sum, warp_sums);
    if thread_idx_x() == 0 {
        *partial.add(block_idx_x() as usize) = total;
    }
}

#[kernel]
fn fold_partials(partial: *const f32, out: *mut f32, count: i32) {
    let warp_sums = shared_array!(f32; 32);
    let mut sum = 0.0f32;
    let mut k = thread_idx_x() as i32;
    while k < count {
        sum += *partial.add(k as usize);
        k += block_dim_x() as i32;
    }
    let total = block_fold(sum, warp_sums);
    if thread_idx_x() == 0 {
        *out = total;
    }
}
)cudojo";

// ---- u64_sum

constexpr std::string_view kU64Sum =
    R"cudojo(// Reference for @ID@: each thread sums its grid-stride share of x in 64 bits (two values can pass
// 2^32 already), each warp folds its sums with 64-bit shuffles, and lane 0 adds the warp's total to
// *out with one 64-bit atomic add.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// The prelude's shfl_down_sync moves 32-bit values; a u64 travels as its two halves.
fn shfl_down_u64(value: u64, delta: u32) -> u64 {
    let low = shfl_down_sync(FULL_MASK, value as u32, delta);
    let high = shfl_down_sync(FULL_MASK, (value >> 32) as u32, delta);
    ((high as u64) << 32) | low as u64
}

// Lane 0 ends with the sum of its warp's 32 values.
fn warp_fold(mut value: u64) -> u64 {
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_u64(value, offset);
        offset /= 2;
    }
    value
}

#[kernel]
fn sum_u32(x: *const u32, out: *mut u64, n: i32) {
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut sum = 0u64;
    while i < n {
        sum += *x.add(i as usize) as u64;
        i += stride;
    }
    sum = warp_fold(sum);
    if lane_id() == 0 {
        atomic_add_u64(out, sum);
    }
}
)cudojo";

// ---- histogram

constexpr std::string_view kHistogram =
    R"cudojo(// Reference for @ID@: each thread counts its grid-stride share of values, one atomic add on the
// global bin of each value (bins[v % 256]), so no two threads' increments of one bin are lost.
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).
#[kernel]
fn histogram(values: *const u32, bins: *mut u32, n: i32) {
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    while i < n {
        atomic_add_u32(bins.add((*values.add(i as usize) % 256) as usize), 1);
        i += stride;
    }
}
)cudojo";

// ---- float_max

constexpr std::string_view kFloatMax =
    R"cudojo(// Reference for @ID@: a float atomic max from atomic_cas_u32 under the contract's rule (NaN is
// skipped, +0.0 ranks above -0.0). Each thread keeps the largest of its grid-stride share, each warp
// folds with shuffles, and lane 0 makes the warp's one CAS loop on *out.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).
// TODO(author): this reference is correct but plain: write the kernel your lesson teaches (under a
// time_ratio gate, learners are timed against it).

// Does `candidate` beat `current` under the rule? Neither is NaN here.
fn beats(candidate: f32, current: f32) -> bool {
    candidate > current
        || (candidate == current && current.is_sign_negative() && candidate.is_sign_positive())
}

// Read, decide, try to swap; if another thread got there first, decide again against its value.
unsafe fn atomic_max_by_rule(address: *mut f32, value: f32) {
    let word = address as *mut u32;
    let mut seen = unsafe { *word };
    while beats(value, f32::from_bits(seen)) {
        let before = unsafe { atomic_cas_u32(word, seen, value.to_bits()) };
        if before == seen {
            return;
        }
        seen = before;
    }
}

#[kernel]
fn max_value(x: *const f32, out: *mut f32, n: i32) {
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut best = f32::NEG_INFINITY; // the driver's starting *out
    while i < n {
        let value = *x.add(i as usize);
        if !value.is_nan() && beats(value, best) {
            best = value;
        }
        i += stride;
    }
    let mut offset = 16;
    while offset > 0 {
        let other = shfl_down_sync(FULL_MASK, best, offset);
        if beats(other, best) {
            best = other;
        }
        offset /= 2;
    }
    if lane_id() == 0 {
        atomic_max_by_rule(out, best);
    }
}
)cudojo";

}  // namespace

std::string_view rust_reference_template(std::string_view contract) {
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

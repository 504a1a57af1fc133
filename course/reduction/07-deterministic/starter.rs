// Stage reduction/7: block_partials writes partial[blockIdx.x] = its block's share of x[0..n);
// then fold_partials, on one block, writes *out = the sum of partial[0..count).
// Launch: block_partials on 4 blocks per SM (528 on the H200) x 256 threads; fold_partials on
// 1 block x 256 threads with count = 528. partial[] and *out start as NaN. No dynamic shared memory.
// block_partials is right. fold_partials gets exact data right, but its float atomics land in a
// different order from run to run, so inexact sums change in the last bits: not deterministic.

fn warp_fold(mut value: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_sync(FULL_MASK, value, offset);
        offset /= 2;
    }
    value
}

fn add4(v: [f32; 4]) -> f32 {
    (v[0] + v[1]) + (v[2] + v[3])
}

#[kernel]
fn block_partials(x: *const f32, partial: *mut f32, n: i32) {
    let warp_sums = shared_array!(f32; 32);
    let n4 = n / 4;
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let first = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut acc0 = 0.0f32;
    let mut acc1 = 0.0f32;
    let mut i = first;
    while i + 3 * stride < n4 {
        let a = load_f32x4(x.add(4 * i as usize));
        let b = load_f32x4(x.add(4 * (i + stride) as usize));
        let c = load_f32x4(x.add(4 * (i + 2 * stride) as usize));
        let d = load_f32x4(x.add(4 * (i + 3 * stride) as usize));
        acc0 += add4(a) + add4(b);
        acc1 += add4(c) + add4(d);
        i += 4 * stride;
    }
    while i < n4 {
        acc0 += add4(load_f32x4(x.add(4 * i as usize)));
        i += stride;
    }
    if first < n % 4 {
        acc1 += *x.add((4 * n4 + first) as usize);
    }

    let lane = lane_id();
    let warp = thread_idx_x() / 32;
    let mut value = warp_fold(acc0 + acc1);
    if lane == 0 {
        *warp_sums.add(warp as usize) = value;
    }
    sync_threads();
    if warp == 0 {
        let warps = block_dim_x() / 32;
        value = warp_fold(if lane < warps { *warp_sums.add(lane as usize) } else { 0.0 });
        if lane == 0 {
            *partial.add(block_idx_x() as usize) = value;
        }
    }
}

#[kernel]
fn fold_partials(partial: *const f32, out: *mut f32, count: i32) {
    if thread_idx_x() == 0 {
        *out = 0.0; // *out starts as NaN
    }
    sync_threads(); // the zero is in place before anyone adds
    let mut k = thread_idx_x() as i32;
    while k < count {
        atomic_add_f32(out, *partial.add(k as usize));
        k += block_dim_x() as i32;
    }
}

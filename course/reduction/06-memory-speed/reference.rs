// Reference for reduction/6: a grid-stride sum that keeps HBM busy, then one atomic add per block.
// One thread: walks X in 16-byte loads (load_f32x4, CUDA's float4), four of them issued back to
//   back per step (64 bytes in flight per thread), spaced a whole grid apart so each warp's loads
//   are contiguous; then the last N % 4 elements, which no 16-byte load covers, as plain floats.
// One warp: folds its 32 running sums with shuffles.
// One block: 8 warp sums meet in shared memory; thread 0 makes the block's one atomic add.
// Launch assumption: a fixed grid (a few blocks per SM), blockDim.x a multiple of 32, at most 1024;
// x 16-byte aligned (cudaMalloc returns at least 256-byte alignment).

fn warp_fold(mut value: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_sync(FULL_MASK, value, offset);
        offset /= 2;
    }
    value
}

// Group k of x: the four floats x[4k .. 4k+4), in one 16-byte load.
unsafe fn group(x: *const f32, k: i32) -> [f32; 4] {
    unsafe { load_f32x4(x.add(4 * k as usize)) }
}

fn add4(v: [f32; 4]) -> f32 {
    (v[0] + v[1]) + (v[2] + v[3])
}

#[kernel]
fn stream_sum(x: *const f32, out: *mut f32, n: i32) {
    let warp_sums = shared_array!(f32; 32);
    let n4 = n / 4; // whole 16-byte groups in x
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let first = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;

    // Two running sums, so consecutive steps do not wait on one chain of additions.
    let mut acc0 = 0.0f32;
    let mut acc1 = 0.0f32;
    let mut i = first;
    // All four loads are issued before any addition needs them: the memory system sees 64 bytes
    // per thread at once instead of 16, which is what it takes to keep HBM busy with a small grid.
    while i + 3 * stride < n4 {
        let a = group(x, i);
        let b = group(x, i + stride);
        let c = group(x, i + 2 * stride);
        let d = group(x, i + 3 * stride);
        acc0 += add4(a) + add4(b);
        acc1 += add4(c) + add4(d);
        i += 4 * stride;
    }
    while i < n4 {
        // fewer than four strides left
        acc0 += add4(group(x, i));
        i += stride;
    }
    if first < n % 4 {
        // the tail: at most 3 floats after the last whole group
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
            atomic_add_f32(out, value); // 528 atomics on the H200: too few to queue
        }
    }
}

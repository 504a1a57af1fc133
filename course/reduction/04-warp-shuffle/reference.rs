// Reference for reduction/4: shuffles inside each warp, shared memory between the warps.
// One thread: loads its element (0.0 past N) and takes part in five shuffle rounds.
// One warp: 32 values shrink to one in lane 0, which stores it in warp_sums[warp].
// One block: warp 0 folds the warp sums the same way; lane 0 writes partial[blockIdx.x].
// Launch assumption: blockDim.x is a multiple of 32 and at most 1024 (32 warps).

// Lane 0 ends with the sum of the warp's 32 values; the other lanes hold partial sums.
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
    sync_threads();

    if warp == 0 {
        let warps = block_dim_x() / 32;
        value = warp_fold(if lane < warps { *warp_sums.add(lane as usize) } else { 0.0 });
        if lane == 0 {
            *partial.add(block_idx_x() as usize) = value;
        }
    }
}

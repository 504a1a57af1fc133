// Reference for reduction/9: widen first, fold each warp with 64-bit shuffles, fold the block's
// warp sums the same way, then one 64-bit atomic add per block.
// One thread: turns its element (0 past N) into a u64 before any add.
// One warp: 32 values shrink to one in lane 0 (5 shuffle rounds), stored in warp_sums[warp].
// One block: warp 0 folds the warp sums; lane 0 adds the block's total to *out.
// Launch assumption: blockDim.x is a multiple of 32 and at most 1024 (32 warps).
//
// Every partial is 64 bits wide, not only the total: 32 full-range values can reach 2^37 and a
// block of 256 can reach 2^40, far past what a u32 holds.

// The prelude's shfl_down_sync moves 32-bit values (f32, i32, u32), as the hardware does; a u64
// travels as its two halves, which is also what CUDA's 64-bit overload does.
fn shfl_down_u64(value: u64, delta: u32) -> u64 {
    let low = shfl_down_sync(FULL_MASK, value as u32, delta);
    let high = shfl_down_sync(FULL_MASK, (value >> 32) as u32, delta);
    ((high as u64) << 32) | low as u64
}

// Lane 0 ends with the sum of the warp's 32 values.
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
    let warp_sums = shared_array!(u64; 32);
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let lane = thread_idx_x() % 32;
    let warp = thread_idx_x() / 32;

    // Widen at the load: the very first add (two lanes' values) can already pass 2^32.
    let mine = if i < n { *x.add(i as usize) as u64 } else { 0 };
    let mut value = warp_fold(mine);
    if lane == 0 {
        *warp_sums.add(warp as usize) = value;
    }
    sync_threads();

    if warp == 0 {
        let warps = block_dim_x() / 32;
        value = warp_fold(if lane < warps { *warp_sums.add(lane as usize) } else { 0 });
        if lane == 0 {
            atomic_add_u64(out, value);
        }
    }
}

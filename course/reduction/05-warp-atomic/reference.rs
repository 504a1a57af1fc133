// Reference for reduction/5: each warp folds its 32 values in registers, then one atomic add per
// warp.
// One thread: loads its element (0.0 past N) and takes part in five shuffle rounds; it never
// returns early, because every lane named in the shuffle's mask must execute it.
// One warp: 32 values shrink to one in lane 0, which adds it to *out.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps), so each lane has all 31 partners.
#[kernel]
fn warp_sum(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    // Lanes past N carry the identity instead of leaving.
    let mut value = if i < n { *x.add(i as usize) } else { 0.0 };

    // Offsets 16, 8, 4, 2, 1: after each round lane k holds the sum of lanes k .. k + 2*offset - 1,
    // so after the last round lane 0 holds all 32. The other lanes end with partial sums.
    let mut offset = 16;
    while offset > 0 {
        value += shfl_down_sync(FULL_MASK, value, offset);
        offset /= 2;
    }

    if lane_id() == 0 {
        atomic_add_f32(out, value); // one update of *out per 32 elements
    }
}

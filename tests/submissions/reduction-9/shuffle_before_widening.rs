// expect: verdict=wrong_answer finding=overflow
// Widens too late: the warp folds u32 values (which wrap) and only the warp's sum becomes a u64.
// Right on bytes; on full_range 32 values pass 2^32 inside the shuffles.
#[kernel]
fn sum_u32(x: *const u32, out: *mut u64, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut v: u32 = if i < n { *x.add(i as usize) } else { 0 };
    let mut offset = 16;
    while offset > 0 {
        v += shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    if lane_id() == 0 {
        atomic_add_u64(out, v as u64);
    }
}

// expect: verdict=wrong_answer finding=imprecise
// One atomic per warp: 32,768 adds of 3.2 into a total near 100,000 still drift past 1e-4 on
// tenths (about 2.9e-4 at 2^20).
#[kernel]
fn sum_tenths(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    let mut v = if i < n { *x.add(i as usize) } else { 0.0 };
    let mut offset = 16;
    while offset > 0 {
        v += shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    if lane_id() == 0 {
        atomic_add_f32(out, v);
    }
}

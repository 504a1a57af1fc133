// expect: verdict=wrong_answer finding=wrong_value
// The fold starts at offset 8, as if a warp had 16 lanes: lanes 16-31 never reach lane 0.
#[kernel]
fn warp_sum(x: *const f32, out: *mut f32, n: i32) {
    let i = index_1d() as i32;
    let mut v = if i < n { *x.add(i as usize) } else { 0.0 };
    let mut offset = 8;
    while offset > 0 {
        v += shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    if lane_id() == 0 {
        atomic_add_f32(out, v);
    }
}

// expect: verdict=wrong_answer finding=mask_names_gone_lanes@13
// Lanes past n return before the fold, but FULL_MASK still names all 32: the shuffle waits only for
// the lanes still there, and what they read from the gone lanes is undefined.
#[kernel]
fn warp_sum(x: *const f32, out: *mut f32, n: i32) {
    let i = index_1d() as i32;
    if i >= n {
        return;
    }
    let mut v = *x.add(i as usize);
    let mut offset = 16;
    while offset > 0 {
        v += shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    if lane_id() == 0 {
        atomic_add_f32(out, v);
    }
}

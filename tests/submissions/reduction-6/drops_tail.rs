// expect: verdict=wrong_answer finding=wrong_value
// A 16-byte-load grid-stride loop over n / 4 groups and nothing else: the last n % 4 elements are
// never read, so every size that is not a multiple of 4 comes out short.
fn warp_fold(mut v: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        v += shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    v
}

#[kernel]
fn stream_sum(x: *const f32, out: *mut f32, n: i32) {
    let warp_sums = shared_array!(f32; 32);
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = index_1d() as i32;
    let mut acc = 0.0f32;
    while i < n / 4 {
        let v = load_f32x4(x.add(4 * i as usize));
        acc += (v[0] + v[1]) + (v[2] + v[3]);
        i += stride;
    }
    let mut value = warp_fold(acc);
    if lane_id() == 0 {
        *warp_sums.add((thread_idx_x() / 32) as usize) = value;
    }
    sync_threads();
    if thread_idx_x() < 32 {
        let lane = thread_idx_x();
        value = warp_fold(if lane < block_dim_x() / 32 { *warp_sums.add(lane as usize) } else { 0.0 });
        if lane == 0 {
            atomic_add_f32(out, value);
        }
    }
}

// expect: verdict=wrong_answer finding=wrong_value
// The fold reads partial[threadIdx.x] and nothing more, as if there were one partial per thread.
// The H200's grid makes 528 partials: 256 to 527 are dropped, and with this kernel's one float
// per thread and step, block 256 has data from N = 65,537 on.
fn warp_fold(mut v: f32) -> f32 {
    let mut offset = 16;
    while offset > 0 {
        v += shfl_down_sync(FULL_MASK, v, offset);
        offset /= 2;
    }
    v
}

// The block's total in thread 0; every thread must call it.
unsafe fn block_fold(v: f32, warp_sums: *mut f32) -> f32 {
    let mut v = warp_fold(v);
    if lane_id() == 0 {
        unsafe { *warp_sums.add((thread_idx_x() / 32) as usize) = v };
    }
    sync_threads();
    if thread_idx_x() < 32 {
        let lane = thread_idx_x();
        v = warp_fold(if lane < block_dim_x() / 32 { unsafe { *warp_sums.add(lane as usize) } } else { 0.0 });
    }
    v
}

#[kernel]
fn block_partials(x: *const f32, partial: *mut f32, n: i32) {
    let warp_sums = shared_array!(f32; 32);
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = index_1d() as i32;
    let mut acc = 0.0f32;
    while i < n {
        acc += *x.add(i as usize);
        i += stride;
    }
    let total = block_fold(acc, warp_sums);
    if thread_idx_x() == 0 {
        *partial.add(block_idx_x() as usize) = total;
    }
}

#[kernel]
fn fold_partials(partial: *const f32, out: *mut f32, _count: i32) {
    let warp_sums = shared_array!(f32; 32);
    let total = block_fold(*partial.add(thread_idx_x() as usize), warp_sums);
    if thread_idx_x() == 0 {
        *out = total;
    }
}

// expect: verdict=wrong_answer finding=uninitialized_shared
// The lesson's trap: threads past N return before writing their slot, and the fold reads it.
#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {
    let s = dynamic_shared::<f32>();
    let tid = thread_idx_x();
    let i = (block_idx_x() * block_dim_x() + tid) as i32;
    if i >= n {
        return;
    }
    *s.add(tid as usize) = *x.add(i as usize);
    sync_threads();
    let mut half = block_dim_x() / 2;
    while half > 0 {
        if tid < half {
            *s.add(tid as usize) += *s.add((tid + half) as usize);
        }
        sync_threads();
        half /= 2;
    }
    if tid == 0 {
        atomic_add_f32(out, *s);
    }
}

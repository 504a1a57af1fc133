// expect: verdict=wrong_answer finding=shared_race@13
// The fold has no barrier between its steps: a step can read a slot that the previous step has
// not written yet. The sum is often right anyway.
#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {
    let s = dynamic_shared::<f32>();
    let tid = thread_idx_x();
    let i = (block_idx_x() * block_dim_x() + tid) as i32;
    *s.add(tid as usize) = if i < n { *x.add(i as usize) } else { 0.0 };
    sync_threads();
    let mut half = block_dim_x() / 2;
    while half > 0 {
        if tid < half { *s.add(tid as usize) += *s.add((tid + half) as usize); }
        half /= 2;
    }
    if tid == 0 {
        atomic_add_f32(out, *s);
    }
}

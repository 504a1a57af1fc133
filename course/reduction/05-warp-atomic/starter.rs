// Stage reduction/5: add X[0..N) into *out (the driver sets it to 0.0 before the launch).
// Launch: ceil(N / 256) blocks x 256 threads, no dynamic shared memory.
// Correct and slow: one atomic add per element, so all N threads queue on the same address.
#[kernel]
fn warp_sum(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        atomic_add_f32(out, *x.add(i as usize));
    }
}

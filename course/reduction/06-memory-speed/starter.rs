// Stage reduction/6: add X[0..N) into *out (the driver sets it to 0.0 before the launch).
// Launch: 4 blocks per SM (528 on the H200) x 256 threads, whatever N is; no dynamic shared memory.
// Correct and too slow against CUB: every thread makes its own atomic add (135,168 on the H200),
// all queued on the same address, and every load fetches only 4 bytes.
#[kernel]
fn stream_sum(x: *const f32, out: *mut f32, n: i32) {
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut sum = 0.0f32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    while i < n {
        sum += *x.add(i as usize);
        i += stride;
    }
    atomic_add_f32(out, sum);
}

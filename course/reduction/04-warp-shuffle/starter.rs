// Stage reduction/4: partial[blockIdx.x] = the sum of this block's elements of X[0..N).
// Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
// Correct and serial: thread 0 walks the block's elements alone while 255 threads wait.
#[kernel]
fn block_sum(x: *const f32, partial: *mut f32, n: i32) {
    let first = (block_idx_x() * block_dim_x()) as i32;
    if thread_idx_x() == 0 {
        let mut total = 0.0f32;
        for k in 0..block_dim_x() as i32 {
            if first + k < n {
                total += *x.add((first + k) as usize);
            }
        }
        *partial.add(block_idx_x() as usize) = total;
    }
}

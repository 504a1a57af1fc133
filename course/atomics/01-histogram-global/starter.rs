// Stage atomics/1: bins[v % 256] counts the values v in values[0..N) (the driver zeroes bins).
// Launch: ceil(N / 256) blocks x 256 threads, no dynamic shared memory.
// A plain += is load, add, store: threads landing on the same bin overwrite each other's counts.
#[kernel]
fn histogram(values: *const u32, bins: *mut u32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        let bin = *values.add(i as usize) % 256;
        *bins.add(bin as usize) += 1;
    }
}

// Stage atomics/2: bins[v % 256] counts the values v in values[0..N) (the driver zeroes bins).
// Launch: 4 blocks per SM (a fixed grid, whatever N is) x 256 threads, no dynamic shared memory.
// Stage 1's kernel in a grid-stride loop: correct, but on one-bin data all N atomics queue on one address.
#[kernel]
fn histogram(values: *const u32, bins: *mut u32, n: i32) {
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    while i < n {
        atomic_add_u32(bins.add((*values.add(i as usize) % 256) as usize), 1);
        i += stride;
    }
}

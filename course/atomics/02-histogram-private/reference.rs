// Reference for atomics/2: a private histogram per block in shared memory, merged once at the end.
// One thread: zeroes its share of the block's bins, counts a grid-stride slice of the values into
//   them with shared-memory atomics, then adds its share of the bins to the global histogram.
// One block: 256 private counters on its SM. However many values the block counts, the global
//   bins receive at most 256 atomics from it (one per nonzero bin).
// Launch assumption: a fixed grid of a few blocks per SM, any blockDim.x; N may be far larger
//   than the grid's thread count.
const BINS: usize = 256;

#[kernel]
fn histogram(values: *const u32, bins: *mut u32, n: i32) {
    let local = shared_array!(u32; 256); // BINS bins (the macro wants the number itself)
    let tid = thread_idx_x() as usize;
    let threads = block_dim_x() as usize;

    // Shared memory holds whatever was there before this block started: clear it. Striding by
    // blockDim.x covers all 256 bins for any block size, not only for 256 threads.
    let mut b = tid;
    while b < BINS {
        *local.add(b) = 0;
        b += threads;
    }
    // A fast warp must not count into a bin that a slower warp has not cleared yet.
    sync_threads();

    // Consecutive threads read consecutive values on every pass, so the loads stay coalesced.
    // A hot bin is now contended only by this block's threads, on this SM.
    let stride = (grid_dim_x() * block_dim_x()) as i32;
    let mut i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    while i < n {
        let bin = *values.add(i as usize) as usize % BINS;
        atomic_add_u32(local.add(bin), 1);
        i += stride;
    }
    // Every count of the block must be in before any thread reads a bin to merge it.
    sync_threads();

    // Every block adds its share into the same 256 global bins, so this must be an atomic add:
    // a store would overwrite the other blocks' counts. Empty bins have nothing to add.
    let mut b = tid;
    while b < BINS {
        let count = *local.add(b);
        if count != 0 {
            atomic_add_u32(bins.add(b), count);
        }
        b += threads;
    }
}

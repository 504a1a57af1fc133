// Reference for atomics/1: one global atomic increment per value.
// One thread: reads one value (none past N), finds its bin, adds 1 to that bin atomically.
// One block: 256 values, 256 atomics on whichever bins they fall in; blocks never cooperate.
// Launch assumption: at least N threads in the grid (ceil(N / blockDim.x) blocks).
#[kernel]
fn histogram(values: *const u32, bins: *mut u32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    // Past N the driver has planted values that are not part of the input: never read them.
    if i < n {
        // The bin is the value's lowest byte; on a u32, % 256 compiles to a mask.
        let bin = *values.add(i as usize) % 256;
        // Any two threads may pick the same bin; the atomic makes their load-add-store
        // indivisible, so neither increment is lost. Atomics on one address are applied one at a
        // time, which is the cost this stage measures.
        atomic_add_u32(bins.add(bin as usize), 1);
    }
}

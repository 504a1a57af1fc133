// Reference for reduction/3: each block folds its values in shared memory, then adds its one
// total with a single atomic.
// One thread: writes its element (0.0 past N) into its slot, then takes part in 8 halving steps.
// One block: 256 values shrink to one in s[0]; thread 0 adds that to *out.
// Launch assumption: blockDim.x is a power of two and the dynamic shared memory holds
// blockDim.x floats (256 x 4 = 1024 bytes).
#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {
    let s = dynamic_shared::<f32>();
    let tid = thread_idx_x();
    let i = (block_idx_x() * block_dim_x() + tid) as i32;

    // Every thread writes its slot, past N too: the fold reads all of them.
    *s.add(tid as usize) = if i < n { *x.add(i as usize) } else { 0.0 };
    sync_threads();

    let mut half = block_dim_x() / 2;
    while half > 0 {
        if tid < half {
            *s.add(tid as usize) += *s.add((tid + half) as usize);
        }
        sync_threads(); // the next step reads what this step wrote
        half /= 2;
    }

    if tid == 0 {
        atomic_add_f32(out, *s);
    }
}

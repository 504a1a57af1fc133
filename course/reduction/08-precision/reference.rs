// Reference for reduction/8: a shared-memory tree per block, then one atomic add per block.
// One thread: writes its element (0.0 past N) into its slot, then takes part in 8 halving steps.
// One block: 256 values shrink to one in s[0]; thread 0 adds that to *out.
// Launch assumption: blockDim.x is a power of two and the dynamic shared memory holds
// blockDim.x floats (256 x 4 = 1024 bytes).
//
// Why this is precise enough: each f32 add rounds its result to what the larger operand leaves
// room for, so its error grows with the running total. In the tree both operands of every add have
// the same size, and the large total only takes one add per block (4096 at 2^20 elements), not one
// per element.
#[kernel]
fn sum_tenths(x: *const f32, out: *mut f32, n: i32) {
    let s = dynamic_shared::<f32>();
    let tid = thread_idx_x();
    let i = (block_idx_x() * block_dim_x() + tid) as i32;

    *s.add(tid as usize) = if i < n { *x.add(i as usize) } else { 0.0 };
    sync_threads();

    let mut half = block_dim_x() / 2;
    while half > 0 {
        if tid < half {
            // Two partial sums of the same size: little is rounded away.
            *s.add(tid as usize) += *s.add((tid + half) as usize);
        }
        sync_threads();
        half /= 2;
    }

    if tid == 0 {
        atomic_add_f32(out, *s); // the only add into the large running total, once per block
    }
}

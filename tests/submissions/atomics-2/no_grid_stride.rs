// expect: verdict=wrong_answer finding=lost_updates
// One value per thread, as in stage 1: the fixed grid counts only its first gridDim.x * blockDim.x values.
#[kernel]
fn histogram(values: *const u32, bins: *mut u32, n: i32) {
    let local = shared_array!(u32; 256);
    let tid = thread_idx_x() as usize;
    *local.add(tid) = 0;
    sync_threads();
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        atomic_add_u32(local.add((*values.add(i as usize) % 256) as usize), 1);
    }
    sync_threads();
    let count = *local.add(tid);
    if count != 0 {
        atomic_add_u32(bins.add(tid), count);
    }
}

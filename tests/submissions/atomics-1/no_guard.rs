// expect: verdict=wrong_answer finding=out_of_bounds
// No i < n check: threads of the last block count the values the driver planted past the end.
#[kernel]
fn histogram(values: *const u32, bins: *mut u32, _n: i32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    atomic_add_u32(bins.add((*values.add(i as usize) % 256) as usize), 1);
}

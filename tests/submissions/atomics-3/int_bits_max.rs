// expect: verdict=wrong_answer finding=wrong_value
// atomic_max_i32 on the f32's bits, NaN skipped: negative floats order backwards as i32 and all
// sit below the bits of -infinity, so on all_negative *out never leaves -infinity.
#[kernel]
fn max_value(x: *const f32, out: *mut f32, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        let v = *x.add(i as usize);
        if !v.is_nan() {
            atomic_max_i32(out as *mut i32, v.to_bits() as i32);
        }
    }
}

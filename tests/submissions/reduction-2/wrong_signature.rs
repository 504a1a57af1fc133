// expect: verdict=compile_error
// The driver passes (*const f32, *mut f32, i32); this kernel wants a double accumulator.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn reduce(x: *const f32, out: *mut f64, n: i32) {
    let i = (block_idx_x() * block_dim_x() + thread_idx_x()) as i32;
    if i < n {
        *out += *x.add(i as usize) as f64;
    }
}

// expect: verdict=compile_error
// Tries to read a host file at compile time; refused before rustc runs.
const SECRET: &str = include_str!("/etc/passwd");
#[kernel]
fn reduce(x: *const f32, out: *mut f32, n: i32) {}

// Reference for reduction/1: each increment is one indivisible read-modify-write.
#[kernel]
fn count(c: *mut i32) {
    atomic_add_i32(c, 1);
}

// Stage reduction/1: each thread adds one to *c.
// Launch: 4096 blocks x 256 threads; the driver sets *c to 0 first and expects 1,048,576.
#[kernel]
fn count(c: *mut i32) {
    *c += 1; // a load, an add and a store: other threads slip in between them
}

// Stage reduction/1: every thread adds one to *c.
// Launch: 4096 blocks x 256 threads; the driver zeroes *c first and expects 1,048,576.
__global__ void count(int* c) {
    *c += 1;  // load, add, store: three steps, and other threads run between them
}

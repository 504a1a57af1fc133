// Stage reduction/8: add X[0..N) into *out (zeroed by the driver) to within 1e-4 of the exact sum.
// Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
// One float atomicAdd per element: exact on small integers, but on a million copies of 0.1f
// every add into the growing total rounds the same way, and the answer ends about 1% high.
__global__ void sum_tenths(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        atomicAdd(out, X[i]);
    }
}

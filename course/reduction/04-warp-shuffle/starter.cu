// Stage reduction/4: partial[blockIdx.x] = sum of this block's elements of X[0..N).
// Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
// Correct and serial: thread 0 adds the block's elements one by one while 255 threads idle.
__global__ void block_sum(const float* X, float* partial, int N) {
    int first = blockIdx.x * blockDim.x;
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int k = 0; k < blockDim.x; ++k) {
            if (first + k < N) total += X[first + k];
        }
        partial[blockIdx.x] = total;
    }
}

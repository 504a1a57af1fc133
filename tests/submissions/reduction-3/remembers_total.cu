// expect: verdict=wrong_answer finding=stale_answer
// Computes honestly once, then keeps the total in device memory under a key made of N and the
// first and last elements; a later launch with the same key adds the kept total and returns. The
// tests pass (each case has its own key); the timed launches, whose input changes, do not.
__device__ int kept_n = -1;
__device__ float kept_first, kept_last, kept_total;
__device__ unsigned int blocks_done;

__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    const unsigned tid = threadIdx.x;
    if (kept_n == N && kept_first == X[0] && kept_last == X[N - 1]) {
        if (blockIdx.x == 0 && tid == 0) atomicAdd(out, kept_total);
        return;
    }
    const int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) {
        atomicAdd(out, s[0]);
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            // The last block to finish sees the whole total and keeps it for next time.
            blocks_done = 0;
            kept_total = atomicAdd(out, 0.0f);
            kept_first = X[0];
            kept_last = X[N - 1];
            kept_n = N;
        }
    }
}

// expect: verdict=wrong_answer finding=stale_answer
// Keeps every block's sum from the last full computation, keyed on N and the first and last
// elements, and copies them back when the key matches. The tests pass (each case has its own key);
// the timed launches, whose input changes before each one, do not.
__device__ int kept_n = -1;
__device__ float kept_first, kept_last;
__device__ float kept[1 << 17];
__device__ unsigned int blocks_done;

__global__ void block_sum(const float* X, float* partial, int N) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.x;
    if (kept_n == N && kept_first == X[0] && kept_last == X[N - 1]) {
        if (tid == 0) partial[blockIdx.x] = kept[blockIdx.x];
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
        partial[blockIdx.x] = s[0];
        kept[blockIdx.x] = s[0];
        __threadfence();
        // The last block to finish sets the key, once every block's sum is kept.
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            kept_first = X[0];
            kept_last = X[N - 1];
            kept_n = N;
        }
    }
}

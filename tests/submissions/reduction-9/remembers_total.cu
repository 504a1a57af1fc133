// expect: verdict=wrong_answer finding=stale_answer
// The reference's widened sum, plus a memory: the last block to finish keeps the 64-bit total under
// a key made of N and eight sampled elements, and while the key matches, one thread adds the kept
// total instead of summing. Every test passes (each case has its own key); before each timed launch
// one element takes another value (never its own), so the sum moves and the kept total is wrong on
// every timed launch.
__device__ int kept_n = -1;
__device__ unsigned int kept_sample[8];
__device__ unsigned long long kept_total;
__device__ unsigned int blocks_done;

__device__ unsigned int sample(const unsigned int* X, int N, int k) { return X[(long long)(N - 1) * k / 7]; }

__device__ bool key_matches(const unsigned int* X, int N) {
    if (kept_n != N) return false;
    for (int k = 0; k < 8; ++k) {
        if (sample(X, N, k) != kept_sample[k]) return false;
    }
    return true;
}

__device__ unsigned long long warp_fold(unsigned long long value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

__global__ void sum_u32(const unsigned int* X, unsigned long long* out, int N) {
    __shared__ unsigned long long warp_sums[32];
    if (key_matches(X, N)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(out, kept_total);
        return;
    }
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    unsigned long long value = warp_fold((i < N) ? (unsigned long long)X[i] : 0ull);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = warp_fold((lane < blockDim.x / 32) ? warp_sums[lane] : 0ull);
        if (lane == 0) {
            atomicAdd(out, value);
            // Thread 0 made the block's add; the last block to finish sees the whole total.
            __threadfence();
            if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
                blocks_done = 0;
                kept_total = atomicAdd(out, 0ull);
                for (int k = 0; k < 8; ++k) kept_sample[k] = sample(X, N, k);
                kept_n = N;
            }
        }
    }
}

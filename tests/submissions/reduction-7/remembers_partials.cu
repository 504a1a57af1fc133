// expect: verdict=wrong_answer finding=stale_answer
// The reference's two kernels, with a memory in the first: once every block has written its
// partial, the last block keeps them all under a key made of N and eight sampled elements, and
// while the key matches, each block writes its kept partial instead of reading X. No float atomics,
// so every run gives the same bits, and every test passes (each case has its own key); before each
// timed launch one element changes to another whole value, so the sum moves and the kept partials
// are wrong on every timed launch.
__device__ int kept_n = -1;
__device__ float kept_sample[8];
__device__ float kept_partial[1 << 14];
__device__ unsigned int blocks_done;

__device__ float sample(const float* X, int N, int k) { return X[(long long)(N - 1) * k / 7]; }

__device__ bool key_matches(const float* X, int N) {
    if (kept_n != N) return false;
    for (int k = 0; k < 8; ++k) {
        if (sample(X, N, k) != kept_sample[k]) return false;
    }
    return true;
}

__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

__device__ float block_fold(float value) {
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    value = warp_fold(value);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    if (warp == 0) value = warp_fold((lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f);
    return value;
}

__global__ void block_partials(const float* X, float* partial, int N) {
    if (key_matches(X, N)) {
        if (threadIdx.x == 0) partial[blockIdx.x] = kept_partial[blockIdx.x];
        return;
    }
    const float4* X4 = reinterpret_cast<const float4*>(X);
    const int stride = gridDim.x * blockDim.x;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = first; i < N / 4; i += stride) {
        const float4 v = X4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (first < N % 4) acc += X[N / 4 * 4 + first];
    const float total = block_fold(acc);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = total;
        kept_partial[blockIdx.x] = total;
        __threadfence();
        // The last block to finish sets the key, once every block's partial is kept.
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            for (int k = 0; k < 8; ++k) kept_sample[k] = sample(X, N, k);
            kept_n = N;
        }
    }
}

__global__ void fold_partials(const float* partial, float* out, int count) {
    float acc = 0.0f;
    for (int k = threadIdx.x; k < count; k += blockDim.x) acc += partial[k];
    const float total = block_fold(acc);
    if (threadIdx.x == 0) *out = total;
}

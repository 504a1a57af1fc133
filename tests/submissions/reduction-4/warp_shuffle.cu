// expect: verdict=accepted
__device__ float fold_warp(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}
__global__ void block_sum(const float* X, float* partial, int N) {
    __shared__ float sums[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = fold_warp(i < N ? X[i] : 0.0f);
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = fold_warp(threadIdx.x < blockDim.x / 32 ? sums[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }
}

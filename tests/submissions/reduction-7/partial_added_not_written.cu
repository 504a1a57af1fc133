// expect: verdict=wrong_answer finding=wrong_value
// Lane 0 of each warp adds its warp's sum into partial[blockIdx.x] with atomicAdd, as if the slot
// started at 0. It starts as NaN, so every partial, and the total, is NaN.
__device__ float warp_fold(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__device__ float block_fold(float v) {  // the block's total in thread 0
    __shared__ float warp_sums[32];
    v = warp_fold(v);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) v = warp_fold(threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f);
    return v;
}

__device__ float grid_stride_sum(const float* X, int N) {
    const float4* X4 = reinterpret_cast<const float4*>(X);
    const int stride = gridDim.x * blockDim.x;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = first; i < N / 4; i += stride) {
        const float4 v = X4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (first < N % 4) acc += X[N / 4 * 4 + first];
    return acc;
}

__global__ void block_partials(const float* X, float* partial, int N) {
    const float v = warp_fold(grid_stride_sum(X, N));
    if (threadIdx.x % 32 == 0) atomicAdd(&partial[blockIdx.x], v);
}

__global__ void fold_partials(const float* partial, float* out, int count) {
    float acc = 0.0f;
    for (int k = threadIdx.x; k < count; k += blockDim.x) acc += partial[k];
    const float total = block_fold(acc);
    if (threadIdx.x == 0) *out = total;
}

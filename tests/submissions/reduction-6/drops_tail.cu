// expect: verdict=wrong_answer finding=wrong_value
// A float4 grid-stride loop over N / 4 groups and nothing else: the last N % 4 elements are never
// read, so every size that is not a multiple of 4 comes out short.
__device__ float warp_fold(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void stream_sum(const float* X, float* out, int N) {
    __shared__ float warp_sums[32];
    const float4* X4 = reinterpret_cast<const float4*>(X);
    const int stride = gridDim.x * blockDim.x;
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N / 4; i += stride) {
        const float4 v = X4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    float value = warp_fold(acc);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
    __syncthreads();
    if (threadIdx.x < 32) {
        value = warp_fold(threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f);
        if (threadIdx.x == 0) atomicAdd(out, value);
    }
}

// expect: verdict=runtime_error error=cudaErrorMisalignedAddress
// Peels the N % 4 leftovers off the front, then reads the rest as float4 from X + N % 4. When
// N % 4 is not 0 that address is 4 or 12 bytes past a 16-byte boundary: the first float4 load
// (N = 5) stops the kernel.
__device__ float warp_fold(float v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void stream_sum(const float* X, float* out, int N) {
    __shared__ float warp_sums[32];
    const int rest = N % 4;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    float acc = (first < rest) ? X[first] : 0.0f;
    const float4* X4 = reinterpret_cast<const float4*>(X + rest);
    for (int i = first; i < N / 4; i += stride) {
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

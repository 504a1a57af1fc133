// Stage reduction/7: block_partials writes partial[blockIdx.x] = its block's share of X[0..N);
// then fold_partials, on one block, writes *out = the sum of partial[0..count).
// Launch: block_partials on 4 blocks per SM (528 on the H200) x 256 threads; fold_partials on
// 1 block x 256 threads with count = 528. partial[] and *out start as NaN. No dynamic shared memory.
// block_partials is right. fold_partials gets exact data right, but its float atomics land in a
// different order from run to run, so inexact sums change in the last bits: not deterministic.
__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

// The block's total, valid in thread 0. Every thread of the block must call it.
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

__device__ float add4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__global__ void block_partials(const float* X, float* partial, int N) {
    const float4* X4 = reinterpret_cast<const float4*>(X);
    const int n4 = N / 4;
    const int stride = gridDim.x * blockDim.x;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    float acc0 = 0.0f, acc1 = 0.0f;
    int i = first;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = X4[i], b = X4[i + stride], c = X4[i + 2 * stride], d = X4[i + 3 * stride];
        acc0 += add4(a) + add4(b);
        acc1 += add4(c) + add4(d);
    }
    for (; i < n4; i += stride) acc0 += add4(X4[i]);
    if (first < N % 4) acc1 += X[4 * n4 + first];
    const float total = block_fold(acc0 + acc1);
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

__global__ void fold_partials(const float* partial, float* out, int count) {
    if (threadIdx.x == 0) *out = 0.0f;  // *out starts as NaN
    __syncthreads();                    // the zero is in place before anyone adds
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        atomicAdd(out, partial[k]);
    }
}

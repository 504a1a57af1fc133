// Reference for reduction/6: a grid-stride sum that keeps HBM busy, then one atomicAdd per block.
// One thread: walks X in 16-byte float4 loads, four of them issued back to back per step (64 bytes
//   in flight per thread), spaced a whole grid apart so each warp's loads are contiguous; then the
//   last N % 4 elements, which no float4 covers, as plain floats.
// One warp: folds its 32 running sums with shuffles.
// One block: 8 warp sums meet in shared memory; thread 0 makes the block's one atomicAdd.
// Launch assumption: a fixed grid (a few blocks per SM), blockDim.x a multiple of 32, at most 1024;
// X 16-byte aligned (cudaMalloc returns at least 256-byte alignment).
__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

__device__ float add4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__global__ void stream_sum(const float* X, float* out, int N) {
    __shared__ float warp_sums[32];
    const float4* X4 = reinterpret_cast<const float4*>(X);
    const int n4 = N / 4;                          // whole float4s in X
    const int stride = gridDim.x * blockDim.x;     // threads in the grid
    const int first = blockIdx.x * blockDim.x + threadIdx.x;

    // Two running sums, so consecutive steps do not wait on one chain of additions.
    float acc0 = 0.0f, acc1 = 0.0f;
    int i = first;
    // All four loads are issued before any addition needs them: the memory system sees 64 bytes
    // per thread at once instead of 16, which is what it takes to keep HBM busy with a small grid.
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = X4[i];
        const float4 b = X4[i + stride];
        const float4 c = X4[i + 2 * stride];
        const float4 d = X4[i + 3 * stride];
        acc0 += add4(a) + add4(b);
        acc1 += add4(c) + add4(d);
    }
    for (; i < n4; i += stride) {  // fewer than four strides left
        acc0 += add4(X4[i]);
    }
    if (first < N % 4) {  // the tail: at most 3 floats after the last whole float4
        acc1 += X[4 * n4 + first];
    }

    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    float value = warp_fold(acc0 + acc1);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = warp_fold((lane < blockDim.x / 32) ? warp_sums[lane] : 0.0f);
        if (lane == 0) atomicAdd(out, value);  // 528 atomics on the H200: too few to queue
    }
}

// Reference for reduction/4: warp shuffles inside each warp, shared memory between warps.
// One thread: loads its element (0 past N) and joins five shuffle rounds.
// One warp: 32 values become 1 in lane 0, which stores it to warp_sums[warp].
// One block: warp 0 folds the warp sums the same way; lane 0 writes partial[blockIdx.x].
// Launch assumption: blockDim.x is a multiple of 32 and at most 1024 (32 warps).
__device__ float warp_fold(float value) {
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

__global__ void block_sum(const float* X, float* partial, int N) {
    __shared__ float warp_sums[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;

    float value = warp_fold((i < N) ? X[i] : 0.0f);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();

    if (warp == 0) {
        const int warps = blockDim.x / 32;
        value = warp_fold((lane < warps) ? warp_sums[lane] : 0.0f);
        if (lane == 0) partial[blockIdx.x] = value;
    }
}

// expect: verdict=accepted
// Warp shuffles, warp sums meet in shared memory, one atomic per block.
#include <cooperative_groups.h>
__global__ void reduce(const float* X, float* out, int N) {
    __shared__ float warp_sums[8];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < N ? X[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
}

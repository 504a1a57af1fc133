// expect: verdict=wrong_answer finding=imprecise
// Folds the block tree in __half to halve its shared memory: 0.1f becomes 0.0999756 on the way
// in, 2.4e-4 low before any add. Exact data (integers, block sums <= 768) still passes bitwise.
#include <cuda_fp16.h>

__global__ void sum_tenths(const float* X, float* out, int N) {
    __shared__ __half s[256];
    const unsigned tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;

    s[tid] = __float2half((i < N) ? X[i] : 0.0f);
    __syncthreads();

    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] = __hadd(s[tid], s[tid + half]);
        }
        __syncthreads();
    }

    if (tid == 0) {
        atomicAdd(out, __half2float(s[0]));
    }
}

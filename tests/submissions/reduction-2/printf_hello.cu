// expect: verdict=accepted output=hello from block 0
#include <cstdio>
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) printf("hello from block 0, N = %d\n", N);
    if (i < N) atomicAdd(out, X[i]);
}

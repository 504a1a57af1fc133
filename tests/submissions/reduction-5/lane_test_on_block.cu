// expect: verdict=wrong_answer finding=wrong_value
// Folds every warp right, then lets only threadIdx.x == 0 add: one warp in eight reaches *out.
__global__ void warp_sum(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < N) ? X[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (threadIdx.x == 0) atomicAdd(out, v);  // meant: the first lane of each warp
}

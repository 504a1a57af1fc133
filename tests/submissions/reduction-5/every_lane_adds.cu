// expect: verdict=wrong_answer finding=wrong_value
// Folds the warp correctly, then every lane adds what it holds: the leftovers count elements again.
__global__ void warp_sum(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < N) ? X[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    atomicAdd(out, v);  // should be lane 0 only
}

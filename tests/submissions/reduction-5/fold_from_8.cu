// expect: verdict=wrong_answer finding=wrong_value
// The fold starts at offset 8, as if a warp had 16 lanes: lanes 16-31 never reach lane 0.
__global__ void warp_sum(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < N) ? X[i] : 0.0f;
    for (int offset = 8; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

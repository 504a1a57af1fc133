// expect: verdict=wrong_answer finding=mask_names_gone_lanes@10
// Lanes past N return before the fold, but the mask still names all 32: the shuffle waits only for
// the lanes still there, and what they read from the gone lanes is undefined. On an H200 the sum
// comes out right anyway; the check build sees the gone lanes named in the mask.
__global__ void warp_sum(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    float v = X[i];
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

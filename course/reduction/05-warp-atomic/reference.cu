// Reference for reduction/5: each warp folds its 32 values in registers, then one atomicAdd per warp.
// One thread: loads its element (0 past N) and joins five shuffle rounds; it never leaves early,
// because every lane named in the shuffle's mask must execute it.
// One warp: 32 values become 1 in lane 0, which adds it to *out.
// Launch assumption: blockDim.x is a multiple of 32 (whole warps), so each lane has all 31 partners.
__global__ void warp_sum(const float* X, float* out, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float value = (i < N) ? X[i] : 0.0f;  // lanes past N carry the identity instead of returning

    // Offsets 16, 8, 4, 2, 1: after each round lane k holds the sum of lanes k .. k + 2*offset - 1,
    // so after the last round lane 0 holds all 32. Lanes above 0 end with partial sums; ignore them.
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }

    if (threadIdx.x % 32 == 0) {
        atomicAdd(out, value);  // one update of *out per 32 elements
    }
}

// expect: verdict=wrong_answer finding=overflow
// Widens too late: the warp folds unsigned ints and only the warp's sum becomes 64-bit. Right on
// bytes (a warp sums to at most 8,160); on full_range 32 values wrap inside the shuffles.
__global__ void sum_u32(const unsigned int* X, unsigned long long* out, int N) {
    __shared__ unsigned long long warp_sums[8];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    unsigned int v = (i < N) ? X[i] : 0u;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) warp_sums[warp] = v;  // widened here, after the damage
    __syncthreads();

    if (threadIdx.x == 0) {
        unsigned long long total = 0;
        for (int w = 0; w < 8; ++w) total += warp_sums[w];
        atomicAdd(out, total);
    }
}

// expect: verdict=accepted
// Returns early, then shuffles only among the lanes still there and adds a partner's value only
// when that partner is one of them: nothing undefined is ever used, so this is right (if slower
// to read than keeping every lane to the end).
__global__ void warp_sum(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    float v = X[i];
    const unsigned present = __activemask();
    const int lane = threadIdx.x % 32;
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_down_sync(present, v, offset);
        if (lane + offset < 32 && (present >> (lane + offset) & 1u)) v += other;
    }
    if (lane == 0) atomicAdd(out, v);
}

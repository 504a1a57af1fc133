// expect: verdict=wrong_answer finding=shuffle_reads_gone_lane@12
// The early return of early_return_shuffle.cu with the mask "fixed" to the lanes still there:
// the mask no longer names the gone lanes, but lane k still reads lane k + offset, which may have
// left, and adds what it finds. The check build replaces such reads with a loud value, and the
// answer moves: the sum depends on values that are undefined.
__global__ void warp_sum(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    float v = X[i];
    unsigned present = __activemask();
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(present, v, offset);
    }
    if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

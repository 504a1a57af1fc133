// expect: verdict=wrong_answer finding=imprecise
// Sums each warp in double, then still adds one float per warp into *out: the rounding happens
// in that last add, so it lands exactly where float warps do (about 2.9e-4 off at 2^20).
__global__ void sum_tenths(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = (i < N) ? (double)X[i] : 0.0;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(out, (float)v);
    }
}

// expect: verdict=wrong_answer finding=imprecise
// Fewer atomics, still too many: one per warp adds 32,768 values of 3.2 into a total near
// 100,000, about 2.9e-4 off on tenths at 2^20 (float32 replay on the CPU). It is slow too: the lab
// timed this shape at 0.0608 ms against the tree's 0.0111 ms at 2^20.
__global__ void sum_tenths(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < N) ? X[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(out, v);
    }
}

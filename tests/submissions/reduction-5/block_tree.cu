// expect: verdict=accepted
// Stage 3's block tree with a static shared array: one atomic per block, 8x fewer than one per
// warp, and faster than this stage's reference on the H200 (the lesson's point).
#define THREADS 256
__global__ void warp_sum(const float* X, float* out, int N) {
    __shared__ float s[THREADS];
    const unsigned tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();
    for (unsigned half = THREADS / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

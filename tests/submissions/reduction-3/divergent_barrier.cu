// expect: verdict=wrong_answer finding=divergent_barrier@13
// The barrier sits inside the branch, so only the threads still folding reach it. On an H200 the
// sums come out right and compute-sanitizer's synccheck reports nothing; the barrier check sees it.
__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] += s[tid + half];
            __syncthreads();
        }
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

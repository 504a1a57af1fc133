// expect: verdict=wrong_answer finding=divergent_barrier@13
// The divergent fold again, its barrier written as inline PTX: `bar.sync 0` inside `if (tid < half)`
// is reached by only part of the block, whatever the compiler is told it is.
__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] += s[tid + half];
            asm volatile("bar.sync 0;" ::: "memory");
        }
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

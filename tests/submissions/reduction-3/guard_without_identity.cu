// expect: verdict=wrong_answer finding=uninitialized_shared
// Guards the load but stores nothing for lanes past N: their slots keep whatever was there.
__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    if (i < N) s[tid] = X[i];
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

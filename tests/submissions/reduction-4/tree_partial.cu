// expect: verdict=accepted
__global__ void block_sum(const float* X, float* partial, int N) {
    extern __shared__ float s[];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < N ? X[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

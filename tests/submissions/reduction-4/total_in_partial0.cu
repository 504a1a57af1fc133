// expect: verdict=wrong_answer finding=partial_contract
// Misreads the contract: block 0 sums the whole array into partial[0], the others write 0.
// Adding the partials on the host gives the right total; the per-block values are wrong.
__global__ void block_sum(const float* X, float* partial, int N) {
    extern __shared__ float s[];
    const int tid = threadIdx.x;
    if (blockIdx.x != 0) {
        if (tid == 0) partial[blockIdx.x] = 0.0f;
        return;
    }
    float v = 0.0f;
    for (int i = tid; i < N; i += blockDim.x) v += X[i];
    s[tid] = v;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) partial[0] = s[0];
}

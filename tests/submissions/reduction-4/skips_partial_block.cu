// expect: verdict=wrong_answer finding=partial_contract
// A block that is only partly inside X returns without writing its slot.
__global__ void block_sum(const float* X, float* partial, int N) {
    extern __shared__ float s[];
    if ((blockIdx.x + 1) * blockDim.x > N) return;
    const int tid = threadIdx.x;
    s[tid] = X[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

// expect: verdict=wrong_answer finding=lost_updates
// Merges with = instead of adding: each global bin keeps one block's count and loses the others'.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[values[i] % 256], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        bins[b] = local[b];
    }
}

// expect: verdict=wrong_answer finding=uninitialized_shared
// Never clears the shared bins: the block counts on top of whatever shared memory held before.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    __shared__ unsigned int local[256];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[values[i] % 256], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        atomicAdd(&bins[b], local[b]);
    }
}

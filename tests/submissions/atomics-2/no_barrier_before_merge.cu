// expect: verdict=wrong_answer finding=lost_updates
// No barrier between counting and merging: a thread merges its bin while other warps still count into it.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    __shared__ unsigned int local[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[values[i] % 256], 1u);
    }
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        if (local[b] != 0) atomicAdd(&bins[b], local[b]);
    }
}

// expect: verdict=wrong_answer finding=lost_updates
// One value per thread, as in stage 1: the fixed grid counts only its first gridDim.x * blockDim.x values.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(&local[values[i] % 256], 1u);
    __syncthreads();
    if (local[threadIdx.x] != 0) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

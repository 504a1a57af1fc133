// expect: verdict=wrong_answer finding=out_of_bounds
// No i < N check: threads of the last block count the values the driver planted past the end.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&bins[values[i] % 256], 1u);
}

// expect: verdict=too_slow
// Correct, and every increment still goes to global memory: on one-bin data all of them queue on one address.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[values[i] % 256], 1u);
    }
}

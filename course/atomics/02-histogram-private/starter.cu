// Stage atomics/2: bins[v % 256] counts the values v in values[0..N) (the driver zeroes bins).
// Launch: 4 blocks per SM (a fixed grid, whatever N is) x 256 threads, no dynamic shared memory.
// Stage 1's kernel in a grid-stride loop: correct, but on one-bin data all N atomics queue on one address.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        atomicAdd(&bins[values[i] % 256], 1u);
    }
}

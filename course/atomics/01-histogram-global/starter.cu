// Stage atomics/1: bins[v % 256] counts the values v in values[0..N) (the driver zeroes bins).
// Launch: ceil(N / 256) blocks x 256 threads, no dynamic shared memory.
// A plain += is load, add, store: threads landing on the same bin overwrite each other's counts.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        bins[values[i] % 256] += 1;
    }
}

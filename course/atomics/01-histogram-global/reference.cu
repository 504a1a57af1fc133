// Reference for atomics/1: one global atomic increment per value.
// One thread: reads one value (none past N), finds its bin, adds 1 to that bin atomically.
// One block: 256 values, 256 atomics on whichever bins they fall in; blocks never cooperate.
// Launch assumption: at least N threads in the grid (ceil(N / blockDim.x) blocks).
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    // Past N the driver has planted values that are not part of the input: never read them.
    if (i < N) {
        // The bin is the value's lowest byte; for an unsigned value, % 256 compiles to a mask.
        const unsigned int bin = values[i] % 256u;
        // Any two threads may pick the same bin; the atomic makes their load-add-store
        // indivisible, so neither increment is lost. Atomics on one address are applied one at a
        // time, which is the cost this stage measures.
        atomicAdd(&bins[bin], 1u);
    }
}

// Reference for atomics/2: a private histogram per block in shared memory, merged once at the end.
// One thread: zeroes its share of the block's bins, counts a grid-stride slice of the values into
//   them with shared-memory atomics, then adds its share of the bins to the global histogram.
// One block: 256 private counters on its SM. However many values the block counts, the global
//   bins receive at most 256 atomics from it (one per nonzero bin).
// Launch assumption: a fixed grid of a few blocks per SM, any blockDim.x; N may be far larger
//   than the grid's thread count.
constexpr int kBins = 256;

__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    __shared__ unsigned int local[kBins];

    // Shared memory holds whatever was there before this block started: clear it. Striding by
    // blockDim.x covers all 256 bins for any block size, not only for 256 threads.
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
        local[b] = 0;
    }
    // A fast warp must not count into a bin that a slower warp has not cleared yet.
    __syncthreads();

    // Consecutive threads read consecutive values on every pass, so the loads stay coalesced.
    // A hot bin is now contended only by this block's threads, on this SM.
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += stride) {
        atomicAdd(&local[values[i] % kBins], 1u);
    }
    // Every count of the block must be in before any thread reads a bin to merge it.
    __syncthreads();

    // Every block adds its share into the same 256 global bins, so this must be an atomic add:
    // a store would overwrite the other blocks' counts. Empty bins have nothing to add.
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
        const unsigned int count = local[b];
        if (count != 0) {
            atomicAdd(&bins[b], count);
        }
    }
}

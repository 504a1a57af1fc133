// expect: verdict=wrong_answer finding=stale_answer
// The reference's private histogram, plus a memory: the last block to finish keeps the 256 bins
// under a key made of N and eight sampled values, and while the key matches, a launch copies the
// kept bins instead of counting. Every test passes (each case has its own key). The stage is timed
// on one_bin data, where every sample reads the same value whatever was changed; before each timed
// launch one value moves its count to another bin, drawn at random, so the kept bins are wrong on
// every timed launch.
constexpr int kBins = 256;
__device__ int kept_n = -1;
__device__ unsigned int kept_sample[8];
__device__ unsigned int kept_bins[kBins];
__device__ unsigned int blocks_done;

__device__ unsigned int sample(const unsigned int* values, int N, int k) {
    return values[(long long)(N - 1) * k / 7];
}

__device__ bool key_matches(const unsigned int* values, int N) {
    if (kept_n != N) return false;
    for (int k = 0; k < 8; ++k) {
        if (sample(values, N, k) != kept_sample[k]) return false;
    }
    return true;
}

__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    __shared__ unsigned int local[kBins];
    if (key_matches(values, N)) {
        if (blockIdx.x == 0) {
            for (int b = threadIdx.x; b < kBins; b += blockDim.x) bins[b] = kept_bins[b];
        }
        return;
    }
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += stride) {
        atomicAdd(&local[values[i] % kBins], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
        const unsigned int count = local[b];
        if (count != 0) atomicAdd(&bins[b], count);
    }

    // The last block to finish sees every count and keeps the bins, with the key, for next time.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            for (int b = 0; b < kBins; ++b) kept_bins[b] = atomicOr(&bins[b], 0u);
            for (int k = 0; k < 8; ++k) kept_sample[k] = sample(values, N, k);
            kept_n = N;
        }
    }
}

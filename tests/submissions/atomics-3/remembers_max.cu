// expect: verdict=wrong_answer finding=stale_answer
// The attack of issue #22: a right CAS max (the reference's) that keeps its answer in device memory
// under a key made of N and eight elements sampled at fixed places, and while the key matches,
// writes the kept maximum without reading X. Every test passes (each case has its own key, and
// each case's repeated launches see the same X). It was accepted while the timed launches changed
// a random element to a random value, which almost never moves a maximum; now each timed change
// raises a random element above the maximum or lowers the element holding it, so the kept maximum
// is wrong on every timed launch.
__device__ int kept_n = -1;
__device__ unsigned int kept_sample[8];
__device__ float kept_max;
__device__ unsigned int blocks_done;

__device__ bool beats(float candidate, float current) {
    if (candidate > current) return true;
    return candidate == current && (__float_as_uint(current) >> 31) != 0 &&
           (__float_as_uint(candidate) >> 31) == 0;
}

__device__ void atomic_max_by_rule(float* address, float value) {
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    unsigned int seen = *word;
    while (beats(value, __uint_as_float(seen))) {
        const unsigned int before = atomicCAS(word, seen, __float_as_uint(value));
        if (before == seen) return;
        seen = before;
    }
}

// The sampled elements, as bits (a NaN compares equal to itself this way).
__device__ unsigned int sample(const float* X, int N, int k) {
    return __float_as_uint(X[(long long)(N - 1) * k / 7]);
}

__device__ bool key_matches(const float* X, int N) {
    if (kept_n != N) return false;
    for (int k = 0; k < 8; ++k) {
        if (sample(X, N, k) != kept_sample[k]) return false;
    }
    return true;
}

__global__ void max_value(const float* X, float* out, int N) {
    if (key_matches(X, N)) {
        if (blockIdx.x == 0 && threadIdx.x == 0) *out = kept_max;
        return;
    }
    const float minus_infinity = __uint_as_float(0xff800000u);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float value = minus_infinity;
    if (i < N && !isnan(X[i])) value = X[i];
    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_down_sync(0xffffffffu, value, offset);
        if (beats(other, value)) value = other;
    }
    if (threadIdx.x % 32 == 0) atomic_max_by_rule(out, value);

    // Every warp of the block has made its update; the last block to finish sees the whole answer
    // and keeps it, with the key, for the next launch.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            kept_max = __uint_as_float(atomicOr(reinterpret_cast<unsigned int*>(out), 0u));
            for (int k = 0; k < 8; ++k) kept_sample[k] = sample(X, N, k);
            kept_n = N;
        }
    }
}

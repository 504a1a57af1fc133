// expect: verdict=wrong_answer
// The CAS loop stops once *out already wins, with +0.0 over -0.0 handled, but never skips NaN:
// every comparison with NaN is false, so a NaN is swapped in, and the next value of any size
// replaces it. On with_nan the answer is the largest value processed after the last NaN
// (wrong_value), or NaN itself (nan_rule) when a NaN happens to be the last value swapped in;
// which one depends on the order the atomics land in, so only the verdict is stated.
__device__ bool stays(float current, float v) {
    if (current > v) return true;
    bool zeros_wrong_way = (__float_as_uint(current) == 0x80000000u) && (__float_as_uint(v) == 0u);
    return current == v && !zeros_wrong_way;
}

__global__ void max_value(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    const float v = X[i];
    unsigned int* word = (unsigned int*)out;
    unsigned int seen = *word;
    while (!stays(__uint_as_float(seen), v)) {
        unsigned int before = atomicCAS(word, seen, __float_as_uint(v));
        if (before == seen) break;
        seen = before;
    }
}

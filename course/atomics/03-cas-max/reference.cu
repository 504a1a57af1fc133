// Reference for atomics/3: a float atomic max built from atomicCAS, under the stage's rule (NaN
// is skipped, +0.0 ranks above -0.0).
// One thread: loads its element; NaN and lanes past N carry -infinity, which never wins.
// One warp: five shuffle rounds leave the warp's largest value in lane 0, which makes the one
// atomic update of the warp (32 times fewer CAS loops on *out than one per element).
// Launch assumption: blockDim.x is a multiple of 32 (whole warps take part in the shuffles).

// Does `candidate` beat `current` under the rule? Neither is NaN here.
__device__ bool beats(float candidate, float current) {
    if (candidate > current) return true;
    // Two floats that compare equal but differ in bits can only be -0.0 and +0.0; `>` calls them
    // equal, so the sign bit decides: the candidate wins when it is +0.0 and current is -0.0.
    return candidate == current && (__float_as_uint(current) >> 31) != 0 &&
           (__float_as_uint(candidate) >> 31) == 0;
}

// There is no atomicMax for float. atomicCAS(address, expected, desired) stores `desired` only if
// the word still holds `expected`, and returns what it held: so read, decide, try to swap, and if
// another thread got there first, decide again against the value it left.
__device__ void atomic_max_by_rule(float* address, float value) {
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    unsigned int seen = *word;  // a stale read is harmless: the CAS below fails and tells us
    while (beats(value, __uint_as_float(seen))) {
        const unsigned int before = atomicCAS(word, seen, __float_as_uint(value));
        if (before == seen) return;  // our value is in
        seen = before;               // *out changed under us: is ours still larger?
    }
}

__global__ void max_value(const float* X, float* out, int N) {
    const float minus_infinity = __uint_as_float(0xff800000u);  // the driver's starting *out
    const int i = blockIdx.x * blockDim.x + threadIdx.x;

    // Skip NaN before anything compares it: every comparison with NaN is false, so "is the
    // current value already >= NaN?" would say no, and a NaN would be written into *out.
    float value = minus_infinity;
    if (i < N && !isnan(X[i])) value = X[i];

    for (int offset = 16; offset > 0; offset /= 2) {
        const float other = __shfl_down_sync(0xffffffffu, value, offset);
        if (beats(other, value)) value = other;
    }

    if (threadIdx.x % 32 == 0) atomic_max_by_rule(out, value);
}

// expect: verdict=wrong_answer finding=signed_zero
// The textbook CAS loop (skip NaN, stop while current >= v): -0.0 and +0.0 compare equal, so
// whichever zero lands first stays. On signed_zeros the answer is -0.0 whenever that one was
// first; a run gets it right only if +0.0 happens to land first in every test.
__global__ void max_value(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N || isnan(X[i])) return;
    const float v = X[i];
    int* word = (int*)out;
    int seen = *word;
    while (__int_as_float(seen) < v) {
        int before = atomicCAS(word, seen, __float_as_int(v));
        if (before == seen) break;
        seen = before;
    }
}

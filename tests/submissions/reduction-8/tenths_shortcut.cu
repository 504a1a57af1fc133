// expect: verdict=wrong_answer finding=imprecise
// A kernel that recognises the precision stage's data instead of summing it precisely: when three
// sampled elements are 0.1f it writes N x 0.1f computed in double; otherwise it adds one float
// atomic per element. Exact data passes bitwise and random_signed within the tolerance. It was
// accepted while every tenths element was 0.1f; the tenths data now hold rare exceptions (about one
// element in 1024, worth 0.2 to 25.6) that no sample of three finds, so N x 0.1 misses the total
// by about 12%, and when a sample does find one, the per-element atomics drift by about 1%.
__global__ void sum_tenths(const float* X, float* out, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool looks_like_tenths = X[0] == 0.1f && X[N / 2] == 0.1f && X[N - 1] == 0.1f;
    if (looks_like_tenths) {
        if (i == 0) *out = static_cast<float>(static_cast<double>(N) * static_cast<double>(0.1f));
        return;
    }
    if (i < N) atomicAdd(out, X[i]);
}

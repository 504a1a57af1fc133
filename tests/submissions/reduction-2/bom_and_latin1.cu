// expect: verdict=accepted
// Saved with a byte-order mark and a Latin-1 comment (café): still the learner's text.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(out, X[i]);
}

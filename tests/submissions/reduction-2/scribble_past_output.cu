// expect: verdict=wrong_answer finding=out_of_bounds
// Right sum, and one stray store 64 floats past the one-float output: inside the same page, so the
// GPU does not fault, but memory that is not the kernel's is overwritten.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        atomicAdd(out, X[i]);
    }
    if (i == 0) out[64] = -1.0f;
}

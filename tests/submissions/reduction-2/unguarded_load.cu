// expect: verdict=wrong_answer finding=out_of_bounds
// No bounds check: threads past N add whatever follows X in memory.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(out, X[i]);
}

// expect: verdict=runtime_error
// Stops the kernel with a trap when it sees N = 257.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (N == 257) __trap();
    if (i < N) atomicAdd(out, X[i]);
}

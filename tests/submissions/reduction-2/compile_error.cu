// expect: verdict=compile_error
// A typo: the index is named i, the load uses j (line 6).
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        atomicAdd(out, X[j]);
}

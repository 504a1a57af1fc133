// expect: verdict=runtime_error error=cudaErrorIllegalAddress
// Writes through a pointer far outside any allocation.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float* wild = out + (1ll << 40);
    if (i < N) atomicAdd(wild, X[i]);
}

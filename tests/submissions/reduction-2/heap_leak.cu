// expect: verdict=accepted
// Right sum, but each block takes scratch from the device heap and never gives it back: a warm
// worker that ran it is not given another job (the heap outlives the job).
__global__ void reduce(const float* X, float* out, int N) {
    __shared__ float* scratch;
    if (threadIdx.x == 0) scratch = static_cast<float*>(malloc(sizeof(float)));
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        atomicAdd(out, X[i]);
    }
    if (threadIdx.x == 0 && scratch) *scratch = 1.0f;
}

// expect: verdict=time_limit_exceeded
// Never finishes: thread 0 spins on a value nothing changes.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        volatile float* spin = out;
        while (*spin == 0.0f || *spin != 0.0f) {
        }
    }
    if (i < N) atomicAdd(out, X[i]);
}

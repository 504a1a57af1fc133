// expect: verdict=wrong_answer finding=wrong_value
// Stage 3's habit on a fixed grid: each thread reads X[i] once and stops. The 528 x 256 threads
// of the H200's grid cover 135,168 elements; from 1,000,003 on, the rest are never read.
__global__ void stream_sum(const float* X, float* out, int N) {
    __shared__ float s[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = (i < N) ? X[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

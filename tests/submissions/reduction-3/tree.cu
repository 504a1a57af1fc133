// expect: verdict=accepted
// Shared-memory tree with a static array, identity for lanes past N, one atomic per block.
#define THREADS 256
__global__ void reduce(const float* X, float* out, int N) {
    __shared__ float s[THREADS];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * THREADS + tid;
    s[tid] = i < N ? X[i] : 0.0f;
    __syncthreads();
    #pragma unroll
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (tid < half) s[tid] += s[tid + half];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

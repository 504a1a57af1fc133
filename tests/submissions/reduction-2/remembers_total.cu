// expect: verdict=wrong_answer finding=stale_answer
// One atomic per element the first time; afterwards, when N and the first and last elements match
// the last launch, one thread adds the total it kept. Right on every test, wrong once X changes.
__device__ int kept_n = -1;
__device__ float kept_first, kept_last, kept_total;
__device__ unsigned int blocks_done;

__global__ void reduce(const float* X, float* out, int N) {
    if (kept_n == N && kept_first == X[0] && kept_last == X[N - 1]) {
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(out, kept_total);
        return;
    }
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(out, X[i]);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            kept_total = atomicAdd(out, 0.0f);
            kept_first = X[0];
            kept_last = X[N - 1];
            kept_n = N;
        }
    }
}

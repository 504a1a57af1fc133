// expect: verdict=too_slow
// Per-element atomics into a shared float, then one global atomic per block: no block total
// passes 25.6, so the drift is the tree's (3.9e-5) and every precision test passes. But 256 shared
// atomics on one address per block queue up: on the H200 it took 4.5x the tree's time (the gate
// allows 3x), so precision alone does not pass this stage.
__global__ void sum_tenths(const float* X, float* out, int N) {
    __shared__ float block_total;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (threadIdx.x == 0) block_total = 0.0f;  // shared memory starts with garbage
    __syncthreads();

    if (i < N) atomicAdd(&block_total, X[i]);
    __syncthreads();

    if (threadIdx.x == 0) atomicAdd(out, block_total);
}

// stage: reduction/1
// known gap: a counter that counts once per grid size, keeps the increase, and afterwards adds the
// kept increase from one thread. Its count is right on every launch: the right increase is the
// grid's thread count whatever the counter holds, so no change the driver makes between launches
// moves it. It is the gap of a kernel that adds gridDim.x * blockDim.x from one thread, reached
// through memory instead of arithmetic.
__device__ unsigned int kept_grid[16];
__device__ int kept_increase[16];
__device__ int counted;
__device__ unsigned int blocks_done;

__global__ void count(int* c) {
    const unsigned int slot = gridDim.x % 16;
    if (kept_grid[slot] == gridDim.x) {
        if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(c, kept_increase[slot]);
        return;
    }
    atomicAdd(c, 1);
    atomicAdd(&counted, 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            kept_increase[slot] = atomicExch(&counted, 0);
            kept_grid[slot] = gridDim.x;
        }
    }
}

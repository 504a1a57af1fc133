// expect: verdict=wrong_answer finding=stale_answer
// A counter's replay: one atomicAdd per thread for its first eight launches (the tests make six),
// each time keeping the value the counter ended at; from then on one thread writes the kept value
// back instead of counting. The tests pass; every timed launch starts the counter somewhere the
// launch before did not, so the kept end is wrong on every one of them.
__device__ int kept_end;
__device__ unsigned int honest_launches;
__device__ unsigned int blocks_done;

__global__ void count(int* c) {
    if (honest_launches >= 8) {
        if (blockIdx.x == 0 && threadIdx.x == 0) *c = kept_end;
        return;
    }
    atomicAdd(c, 1);
    // Every thread of the block has added; the last block to finish sees the final count.
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&blocks_done, 1u) == gridDim.x - 1) {
            blocks_done = 0;
            kept_end = atomicAdd(c, 0);
            honest_launches += 1;
        }
    }
}

// expect: verdict=wrong_answer finding=constant_answer
// Adds the number of threads it expects from one thread: right only on the stage's own grid.
__global__ void count(int* c) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(c, 4096 * 256);
}

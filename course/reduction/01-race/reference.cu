// Reference for reduction/1: one indivisible increment per thread.
__global__ void count(int* c) {
    atomicAdd(c, 1);
}

// expect: verdict=wrong_answer finding=constant_answer
// Writes the answer instead of counting: right only while the counter starts at zero.
__global__ void count(int* c) {
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(c, 1048576);
}

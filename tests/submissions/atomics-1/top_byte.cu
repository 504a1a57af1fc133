// expect: verdict=wrong_answer finding=wrong_value
// Bins by the highest byte instead of the lowest: the right total, spread over the wrong bins.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(&bins[(values[i] & 0xFF000000u) >> 24], 1u);
}

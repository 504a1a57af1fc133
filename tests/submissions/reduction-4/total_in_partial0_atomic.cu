// expect: verdict=wrong_answer finding=partial_contract
// Every block adds its elements into partial[0] with atomics: one grand total where one value per
// block is due. The other slots keep the driver's NaN marker, so the host's sum is NaN.
__global__ void block_sum(const float* X, float* partial, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(&partial[0], X[i]);
}

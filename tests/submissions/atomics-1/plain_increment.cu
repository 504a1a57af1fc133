// expect: verdict=wrong_answer finding=lost_updates
// The starter's race: a plain += on a bin, so threads sharing a bin overwrite each other's counts.
__global__ void histogram(const unsigned int* values, unsigned int* bins, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) bins[values[i] % 256] += 1;
}

// expect: verdict=wrong_answer finding=overflow
// Gets every partial right in 64 bits, then adds the block's total with the 32-bit atomicAdd on
// (unsigned int*)out: only the low word changes and its carries are lost. Wrong on full_range at
// once; on bytes only at 2^26 elements, where the total (about 8.6e9) passes 2^32.
__device__ unsigned long long warp_fold(unsigned long long v) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void sum_u32(const unsigned int* X, unsigned long long* out, int N) {
    __shared__ unsigned long long warp_sums[8];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    unsigned long long v = warp_fold((i < N) ? (unsigned long long)X[i] : 0ull);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();

    if (warp == 0) {
        v = warp_fold((lane < 8) ? warp_sums[lane] : 0ull);
        if (lane == 0) atomicAdd((unsigned int*)out, (unsigned int)v);
    }
}

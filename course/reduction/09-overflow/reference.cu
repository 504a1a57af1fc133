// Reference for reduction/9: widen first, fold each warp with 64-bit shuffles, fold the block's
// warp sums the same way, then one 64-bit atomicAdd per block.
// One thread: turns its element (0 past N) into an unsigned long long before any add.
// One warp: 32 values become 1 in lane 0 (5 shuffle rounds), stored to warp_sums[warp].
// One block: warp 0 folds the warp sums; lane 0 adds the block's total to *out.
// Launch assumption: blockDim.x is a multiple of 32 and at most 1024 (32 warps).
//
// Every partial is 64 bits wide, not only the total: 32 full-range values can reach 2^37 and a
// block of 256 can reach 2^40, far past what an unsigned int holds. At 2^26 elements the total
// stays below 2^58, so nothing here can wrap.
__device__ unsigned long long warp_fold(unsigned long long value) {
    for (int offset = 16; offset > 0; offset /= 2) {
        // The 64-bit overload moves the value as two 32-bit halves: two shuffles per round.
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

__global__ void sum_u32(const unsigned int* X, unsigned long long* out, int N) {
    __shared__ unsigned long long warp_sums[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;

    // Widen at the load: the very first add (two lanes' values) can already pass 2^32.
    const unsigned long long mine = (i < N) ? (unsigned long long)X[i] : 0ull;
    unsigned long long value = warp_fold(mine);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();

    if (warp == 0) {
        const int warps = blockDim.x / 32;
        value = warp_fold((lane < warps) ? warp_sums[lane] : 0ull);
        if (lane == 0) atomicAdd(out, value);  // the unsigned long long overload: all 64 bits
    }
}

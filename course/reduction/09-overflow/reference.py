# Reference for reduction/9: widen first, fold each warp with 64-bit shuffles, fold the block's
# warp sums the same way, then one 64-bit atomic add per block.
# One thread: turns its element (0 past N) into a uint64 before any add.
# One warp: 32 values become 1 in lane 0 (5 shuffle rounds), stored to warp_sums[warp].
# One block: warp 0 folds the warp sums; lane 0 adds the block's total to out[0].
# Launch assumption: blockDim.x is a multiple of 32 and at most 1024 (32 warps).
#
# Every partial is 64 bits wide, not only the total: 32 full-range values can reach 2^37 and a
# block of 256 can reach 2^40, far past what a uint32 holds.
from numba import cuda, int64, uint64

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit(device=True)
def warp_fold(value):
    offset = 16
    while offset > 0:
        # Numba 0.56 shuffles int32, int64, float32 and float64. Handed a uint64, it picks the
        # float64 version: the value is converted to a double and back, which rounds anything
        # past 2^53. int64 has the same 64 bits, so it travels through two 32-bit shuffles
        # unchanged and comes back as the same uint64.
        value += uint64(cuda.shfl_down_sync(FULL_MASK, int64(value), offset))
        offset //= 2
    return value


@cuda.jit
def sum_u32(X, out, N):
    warp_sums = cuda.shared.array(32, dtype=uint64)  # one 64-bit slot per warp
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    lane = tid % 32
    warp = tid // 32

    # Widen at the load; uint64(0), not 0, keeps both branches the same type.
    value = warp_fold(uint64(X[i]) if i < N else uint64(0))
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()

    if warp == 0:
        warps = cuda.blockDim.x // 32
        value = warp_fold(warp_sums[lane] if lane < warps else uint64(0))
        if lane == 0:
            cuda.atomic.add(out, 0, value)  # out is uint64[::1]: a 64-bit atomic add

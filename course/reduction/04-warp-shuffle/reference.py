# Reference for reduction/4: warp shuffles inside each warp, shared memory between warps.
# One thread: loads its element (0 past N) and joins five shuffle rounds.
# One warp: 32 values become 1 in lane 0, which stores it to warp_sums[warp].
# One block: warp 0 folds the warp sums the same way; lane 0 writes partial[blockIdx.x].
# Launch assumption: blockDim.x is a multiple of 32 and at most 1024 (32 warps).
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit(device=True)
def warp_fold(value):
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)  # lane k adds lane k + offset
        offset //= 2
    return value


@cuda.jit
def block_sum(X, partial, N):
    warp_sums = cuda.shared.array(32, dtype=float32)  # static size: one slot per warp
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    lane = tid % 32
    warp = tid // 32

    value = warp_fold(X[i] if i < N else float32(0.0))
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()

    if warp == 0:
        warps = cuda.blockDim.x // 32
        value = warp_fold(warp_sums[lane] if lane < warps else float32(0.0))
        if lane == 0:
            partial[cuda.blockIdx.x] = value

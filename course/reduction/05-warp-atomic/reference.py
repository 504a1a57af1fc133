# Reference for reduction/5: each warp folds its 32 values in registers, then one atomic add per warp.
# One thread: loads its element (0 past N) and joins five shuffle rounds; it never leaves early,
# because every lane named in the shuffle's mask must execute it.
# One warp: 32 values become 1 in lane 0, which adds it to out[0].
# Launch assumption: blockDim.x is a multiple of 32 (whole warps), so each lane has all 31 partners.
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in every shuffle


@cuda.jit
def warp_sum(X, out, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    # float32(0.0): a bare 0.0 is a float64 and would turn each shuffle into two.
    value = X[i] if i < N else float32(0.0)

    # Offsets 16, 8, 4, 2, 1: after each round lane k holds the sum of lanes k .. k + 2*offset - 1,
    # so after the last round lane 0 holds all 32. Lanes above 0 end with partial sums; ignore them.
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2

    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, value)  # one update of out[0] per 32 elements

# expect: verdict=wrong_answer finding=imprecise
# One atomic per warp: 32,768 adds of 3.2 into a total near 100,000 still drift past 1e-4 on
# tenths (about 2.9e-4 at 2^20).
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF


@cuda.jit
def sum_tenths(X, out, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    v = X[i] if i < N else float32(0.0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, v)

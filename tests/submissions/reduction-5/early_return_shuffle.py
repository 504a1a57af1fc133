# expect: verdict=wrong_answer finding=mask_names_gone_lanes@15
# Lanes past N return before the fold, but the mask still names all 32: the shuffle waits only for
# the lanes still there, and what they read from the gone lanes is undefined.
from numba import cuda


@cuda.jit
def warp_sum(X, out, N):
    i = cuda.grid(1)
    if i >= N:
        return
    v = X[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, v)

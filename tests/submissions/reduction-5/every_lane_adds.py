# expect: verdict=wrong_answer finding=wrong_value
# Folds the warp correctly, then every lane adds what it holds: the leftovers count elements again.
from numba import cuda, float32


@cuda.jit
def warp_sum(X, out, N):
    i = cuda.grid(1)
    v = X[i] if i < N else float32(0.0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    cuda.atomic.add(out, 0, v)  # should be lane 0 only

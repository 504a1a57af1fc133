# expect: verdict=wrong_answer finding=wrong_value
# Lane 0 of each warp adds its warp's sum into partial[blockIdx.x] with an atomic, as if the slot
# started at 0. It starts as NaN, so every partial, and the total, is NaN.
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_fold(v):
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, offset)
        offset //= 2
    return v


@cuda.jit
def block_partials(X, partial, N):
    stride = cuda.gridDim.x * cuda.blockDim.x
    i = cuda.grid(1)
    acc = float32(0.0)
    while i < N:
        acc += X[i]
        i += stride
    v = warp_fold(acc)
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(partial, cuda.blockIdx.x, v)


@cuda.jit
def fold_partials(partial, out, count):
    warp_sums = cuda.shared.array(32, dtype=float32)
    acc = float32(0.0)
    k = cuda.threadIdx.x
    while k < count:
        acc += partial[k]
        k += cuda.blockDim.x
    lane = cuda.threadIdx.x % 32
    v = warp_fold(acc)
    if lane == 0:
        warp_sums[cuda.threadIdx.x // 32] = v
    cuda.syncthreads()
    if cuda.threadIdx.x < 32:
        v = warp_fold(warp_sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0))
        if lane == 0:
            out[0] = v

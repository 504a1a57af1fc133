# Stage reduction/7: block_partials writes partial[blockIdx.x] = its block's share of X[0..N);
# then fold_partials, on one block, writes out[0] = the sum of partial[0..count).
# Launch: block_partials on 4 blocks per SM (528 on the H200) x 256 threads; fold_partials on
# 1 block x 256 threads with count = 528. partial and out start as NaN. No dynamic shared memory.
# block_partials is right. fold_partials gets exact data right, but its float atomics land in a
# different order from run to run, so inexact sums change in the last bits: not deterministic.
from numba import cuda, float32

FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True)
def warp_fold(value):
    offset = 16
    while offset > 0:
        value += cuda.shfl_down_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit
def block_partials(X, partial, N):
    warp_sums = cuda.shared.array(32, dtype=float32)
    stride = cuda.gridDim.x * cuda.blockDim.x
    i = cuda.grid(1)
    acc0 = float32(0.0)
    acc1 = float32(0.0)
    while i + 7 * stride < N:
        a = X[i]
        b = X[i + stride]
        c = X[i + 2 * stride]
        d = X[i + 3 * stride]
        e = X[i + 4 * stride]
        f = X[i + 5 * stride]
        g = X[i + 6 * stride]
        h = X[i + 7 * stride]
        acc0 += (a + b) + (c + d)
        acc1 += (e + f) + (g + h)
        i += 8 * stride
    while i < N:
        acc0 += X[i]
        i += stride

    lane = cuda.threadIdx.x % 32
    warp = cuda.threadIdx.x // 32
    value = warp_fold(acc0 + acc1)
    if lane == 0:
        warp_sums[warp] = value
    cuda.syncthreads()
    if warp == 0:
        value = warp_fold(warp_sums[lane] if lane < cuda.blockDim.x // 32 else float32(0.0))
        if lane == 0:
            partial[cuda.blockIdx.x] = value


@cuda.jit
def fold_partials(partial, out, count):
    if cuda.threadIdx.x == 0:
        out[0] = float32(0.0)  # out starts as NaN
    cuda.syncthreads()  # the zero is in place before anyone adds
    k = cuda.threadIdx.x
    while k < count:
        cuda.atomic.add(out, 0, partial[k])
        k += cuda.blockDim.x

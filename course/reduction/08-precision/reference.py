# Reference for reduction/8: a shared-memory tree per block, then one atomic add per block.
# One thread: stores its element (or 0 past N), then takes part in 8 halving steps.
# One block: 256 values become 1 in s[0]; thread 0 adds it to the total.
# Launch assumption: blockDim.x is a power of two and dynamic shared memory holds blockDim.x floats.
#
# Why this is precise enough: each float add rounds its result to what the larger operand leaves
# room for, so its error grows with the running total. In the tree both operands of every add have
# the same size, and the large total only takes one add per block (4096 at 2^20 elements), not one
# per element.
from numba import cuda, float32


@cuda.jit
def sum_tenths(X, out, N):
    s = cuda.shared.array(0, dtype=float32)  # size 0: the launch's dynamic shared memory
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid

    # float32(0.0), not 0.0: a bare Python float is float64 and would widen the whole fold.
    s[tid] = X[i] if i < N else float32(0.0)
    cuda.syncthreads()

    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            s[tid] += s[tid + half]  # two partial sums of the same size: little is rounded away
        cuda.syncthreads()
        half //= 2

    if tid == 0:
        cuda.atomic.add(out, 0, s[0])  # the only add into the large running total, once per block

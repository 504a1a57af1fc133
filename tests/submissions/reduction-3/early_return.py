# expect: verdict=wrong_answer finding=uninitialized_shared
# The lesson's trap: lanes past N leave before writing their slot, yet the fold reads it.
from numba import cuda, float32


@cuda.jit
def reduce(X, out, N):
    s = cuda.shared.array(0, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    if i >= N:
        return
    s[tid] = X[i]
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            s[tid] += s[tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])

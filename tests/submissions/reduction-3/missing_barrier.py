# expect: verdict=wrong_answer finding=shared_race@17
# The fold has no barrier between steps: a step can read a slot the previous step has not
# written yet. Often the sum still comes out right.
from numba import cuda, float32


@cuda.jit
def reduce(X, out, N):
    s = cuda.shared.array(0, dtype=float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    s[tid] = X[i] if i < N else float32(0.0)
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            s[tid] += s[tid + half]
        half //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])

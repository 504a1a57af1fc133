# expect: verdict=wrong_answer finding=wrong_value
# Stage 5's kernel on a fixed grid: each thread reads one element and stops. The 528 x 256 threads
# of the H200's grid cover 135,168 elements; from 1,000,003 on, the rest are never read.
from numba import cuda, float32


@cuda.jit
def stream_sum(X, out, N):
    i = cuda.grid(1)
    v = X[i] if i < N else float32(0.0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.threadIdx.x % 32 == 0:
        cuda.atomic.add(out, 0, v)

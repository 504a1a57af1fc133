# expect: verdict=wrong_answer finding=wrong_value
# Divides by 256 before taking the remainder: bins by the second byte, not the lowest.
from numba import cuda, uint32


@cuda.jit
def histogram(values, bins, N):
    i = cuda.grid(1)
    if i < N:
        cuda.atomic.add(bins, (values[i] // 256) % 256, uint32(1))

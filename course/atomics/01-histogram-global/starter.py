# Stage atomics/1: bins[v % 256] counts the values v in values[0..N) (the driver zeroes bins).
# Launch: ceil(N / 256) blocks x 256 threads, no dynamic shared memory.
# A plain += is load, add, store: threads landing on the same bin overwrite each other's counts.
from numba import cuda


@cuda.jit
def histogram(values, bins, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < N:
        bins[values[i] % 256] += 1

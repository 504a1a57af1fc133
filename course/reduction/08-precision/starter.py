# Stage reduction/8: add X[0..N) into out[0] (zeroed by the driver) to within 1e-4 of the exact sum.
# Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
# One float atomic add per element: exact on small integers, but on a million copies of 0.1f
# every add into the growing total rounds the same way, and the answer ends about 1% high.
from numba import cuda


@cuda.jit
def sum_tenths(X, out, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < N:
        cuda.atomic.add(out, 0, X[i])

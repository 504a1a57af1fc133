# Stage reduction/4: partial[blockIdx.x] = sum of this block's elements of X[0..N).
# Launch: ceil(N / 256) blocks x 256 threads, 1024 bytes of dynamic shared memory.
# Correct and serial: thread 0 adds the block's elements one by one while 255 threads idle.
from numba import cuda, float32


@cuda.jit
def block_sum(X, partial, N):
    first = cuda.blockIdx.x * cuda.blockDim.x
    if cuda.threadIdx.x == 0:
        total = float32(0.0)
        for k in range(cuda.blockDim.x):
            if first + k < N:
                total += X[first + k]
        partial[cuda.blockIdx.x] = total

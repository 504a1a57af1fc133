# Stage reduction/1: every thread adds one to c[0].
# Launch: 4096 blocks x 256 threads; the driver zeroes c[0] first and expects 1,048,576.
from numba import cuda


@cuda.jit
def count(c):
    c[0] += 1  # read, add, write back: other threads run between the read and the write

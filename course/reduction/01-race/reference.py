# Reference for reduction/1: one indivisible increment per thread.
from numba import cuda


@cuda.jit
def count(c):
    cuda.atomic.add(c, 0, 1)  # c[0] += 1 as one step: no other thread sees it half done

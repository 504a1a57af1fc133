# expect: verdict=wrong_answer finding=lost_updates
# The starter's race: a plain += on a bin, so threads sharing a bin overwrite each other's counts.
from numba import cuda


@cuda.jit
def histogram(values, bins, N):
    i = cuda.grid(1)
    if i < N:
        bins[values[i] % 256] += 1

# Reference for atomics/1: one global atomic increment per value.
# One thread: reads one value (none past N), finds its bin, adds 1 to that bin atomically.
# One block: 256 values, 256 atomics on whichever bins they fall in; blocks never cooperate.
# Launch assumption: at least N threads in the grid (ceil(N / blockDim.x) blocks).
from numba import cuda, uint32


@cuda.jit
def histogram(values, bins, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    # Past N the driver has planted values that are not part of the input: never read them.
    if i < N:
        # The bin is the value's lowest byte. values[i] is a uint32, so the bin is never negative.
        b = values[i] % 256
        # Any two threads may pick the same bin; the atomic makes their load-add-store
        # indivisible, so neither increment is lost. uint32(1) keeps the add in the bins' type.
        cuda.atomic.add(bins, b, uint32(1))

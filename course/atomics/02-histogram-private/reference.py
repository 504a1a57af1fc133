# Reference for atomics/2: a private histogram per block in shared memory, merged once at the end.
# One thread: zeroes its share of the block's bins, counts a grid-stride slice of the values into
#   them with shared-memory atomics, then adds its share of the bins to the global histogram.
# One block: 256 private counters on its SM. However many values the block counts, the global
#   bins receive at most 256 atomics from it (one per nonzero bin).
# Launch assumption: a fixed grid of a few blocks per SM, any blockDim.x; N may be far larger
#   than the grid's thread count.
from numba import cuda, uint32

BINS = 256


@cuda.jit
def histogram(values, bins, N):
    local = cuda.shared.array(BINS, dtype=uint32)  # static size: the launch has no dynamic shared memory
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x

    # Shared memory holds whatever was there before this block started: clear it. Striding by
    # blockDim.x covers all 256 bins for any block size, not only for 256 threads.
    for b in range(tid, BINS, threads):
        local[b] = uint32(0)
    # A fast warp must not count into a bin that a slower warp has not cleared yet.
    cuda.syncthreads()

    # Consecutive threads read consecutive values on every pass, so the loads stay coalesced.
    # A hot bin is now contended only by this block's threads, on this SM.
    i = cuda.blockIdx.x * threads + tid
    stride = cuda.gridDim.x * threads
    while i < N:
        cuda.atomic.add(local, values[i] % BINS, uint32(1))
        i += stride
    # Every count of the block must be in before any thread reads a bin to merge it.
    cuda.syncthreads()

    # Every block adds its share into the same 256 global bins, so this must be an atomic add:
    # a store would overwrite the other blocks' counts. Empty bins have nothing to add.
    for b in range(tid, BINS, threads):
        count = local[b]
        if count != 0:
            cuda.atomic.add(bins, b, count)

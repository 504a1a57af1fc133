# expect: verdict=wrong_answer finding=uninitialized_shared
# Never clears the shared bins: the block counts on top of whatever shared memory held before.
from numba import cuda, uint32


@cuda.jit
def histogram(values, bins, N):
    local = cuda.shared.array(256, dtype=uint32)
    i = cuda.grid(1)
    stride = cuda.gridDim.x * cuda.blockDim.x
    while i < N:
        cuda.atomic.add(local, values[i] % 256, uint32(1))
        i += stride
    cuda.syncthreads()
    for b in range(cuda.threadIdx.x, 256, cuda.blockDim.x):
        cuda.atomic.add(bins, b, local[b])

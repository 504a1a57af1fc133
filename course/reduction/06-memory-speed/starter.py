# Stage reduction/6: add X[0..N) into out[0] (zeroed by the driver before the launch).
# Launch: 4 blocks per SM (528 on the H200) x 256 threads, whatever N is; no dynamic shared memory.
# Correct and too slow against CUB: every thread makes its own atomic add (135,168 on the H200),
# all queued on the same address, and every load fetches only 4 bytes.
from numba import cuda, float32


@cuda.jit
def stream_sum(X, out, N):
    total = float32(0.0)
    i = cuda.grid(1)
    while i < N:
        total += X[i]
        i += cuda.gridDim.x * cuda.blockDim.x
    cuda.atomic.add(out, 0, total)

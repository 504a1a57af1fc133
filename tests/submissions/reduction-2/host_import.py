# expect: verdict=compile_error
# Host code in a kernel file: the judge refuses `import os` before anything runs (line 4).
from numba import cuda
import os


@cuda.jit
def reduce(X, out, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < N:
        cuda.atomic.add(out, 0, X[i])


os.system("cat /etc/passwd")

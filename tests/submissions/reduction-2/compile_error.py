# expect: verdict=compile_error
# A typo: the index is named i, the load uses j (line 10).
from numba import cuda


@cuda.jit
def reduce(X, out, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < N:
        cuda.atomic.add(out, 0, X[j])

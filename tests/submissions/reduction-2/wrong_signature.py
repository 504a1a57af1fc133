# expect: verdict=compile_error
# The driver passes (X, out, N); this kernel forgot N and bounds the loop by X's length.
from numba import cuda


@cuda.jit
def reduce(X, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < X.shape[0]:
        cuda.atomic.add(out, 0, X[i])

// expect: verdict=compile_error
// Tries to switch off the judge's signature check with a macro, then declares the accumulator as
// an int: the check holds, and names what was found and what the stage launches.
#define static_assert(...)
#define decltype(...) int
__global__ void reduce(const float* X, int* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(out, (int)X[i]);
}

// expect: verdict=compile_error
// Asks the compiler whether a host file exists: refused before anything is compiled.
#if __has_include("/etc/shadow")
#error the host has a shadow file
#endif
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(out, X[i]);
}

// expect: verdict=compile_error
// The driver passes (const float*, float*, int); this kernel takes a double accumulator.
__global__ void reduce(const float* X, double* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(out, (double)X[i]);
}

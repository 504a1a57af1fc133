// Reference for reduction/3: a shared-memory tree per block, then one atomicAdd per block.
// One thread: stores its element (or 0 past N), then takes part in 8 halving steps.
// One block: 256 values become 1 in s[0]; thread 0 adds it to the total.
// Launch assumption: blockDim.x is a power of two and dynamic shared memory holds blockDim.x floats.
__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    const unsigned tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;

    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();

    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] += s[tid + half];
        }
        __syncthreads();
    }

    if (tid == 0) {
        atomicAdd(out, s[0]);
    }
}

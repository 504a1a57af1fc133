// Reference for reduction/8: a shared-memory tree per block, then one atomicAdd per block.
// One thread: stores its element (or 0 past N), then takes part in 8 halving steps.
// One block: 256 values become 1 in s[0]; thread 0 adds it to the total.
// Launch assumption: blockDim.x is a power of two and dynamic shared memory holds blockDim.x
// floats.
//
// Why this is precise enough: a float add rounds its result to the 24 bits the larger operand
// leaves room for, so the error of each add grows with the running total. Inside the tree both
// operands of every add are about the same size (0.1 + 0.1, 0.2 + 0.2, ... 12.8 + 12.8), and the
// big total only ever sees one add per block: 4096 adds of 25.6 at 2^20 elements instead of
// 1,048,576 adds of 0.1.
__global__ void sum_tenths(const float* X, float* out, int N) {
    extern __shared__ float s[];
    const unsigned tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;

    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();

    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] += s[tid + half];  // two partial sums of the same size: little is rounded away
        }
        __syncthreads();
    }

    if (tid == 0) {
        atomicAdd(out, s[0]);  // the only add into the large running total, once per block
    }
}

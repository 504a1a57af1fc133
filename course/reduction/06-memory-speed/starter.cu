// Stage reduction/6: add X[0..N) into *out (zeroed by the driver before the launch).
// Launch: 4 blocks per SM (528 on the H200) x 256 threads, whatever N is; no dynamic shared memory.
// Correct and too slow against CUB: every thread makes its own atomicAdd (135,168 on the H200),
// all queued on the same address, and every load fetches only 4 bytes.
__global__ void stream_sum(const float* X, float* out, int N) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) {
        sum += X[i];
    }
    atomicAdd(out, sum);
}

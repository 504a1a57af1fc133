// expect: verdict=wrong_answer
// Lost updates on a float: every thread reads the same old total.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) *out += X[i];
}

// expect: verdict=wrong_answer finding=shared_race@11
// The fold has no barrier between steps: a step can read a slot the previous step has not
// written yet. Often the sum still comes out right.
__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < N) ? X[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) s[tid] += s[tid + half];
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

// expect: verdict=wrong_answer finding=input_modified
// Right total on the first launch, but it "consumes" X by zeroing it.
__global__ void reduce(const float* X, float* out, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        atomicAdd(out, X[i]);
        const_cast<float*>(X)[i] = 0.0f;
    }
}

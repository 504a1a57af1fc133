// expect: verdict=too_slow output=thread
// A learner debugging with printf on every thread: the sums are right, so the verdict is about
// correctness and speed (printing is slow), with the first part of the output and a note that
// the rest was dropped; never a time limit caused by the printing itself.
#include <cstdio>
__global__ void reduce(const float* X, float* out, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    printf("thread %d of block %d sees %f\n", threadIdx.x, blockIdx.x, i < N ? X[i] : 0.0f);
    if (i < N) atomicAdd(out, X[i]);
}

// expect: verdict=wrong_answer finding=divergent_barrier@17
// The divergent fold of divergent_barrier.cu, with cooperative groups' block.sync() in place of
// __syncthreads(). It reaches the hardware barrier through CUDA's own headers; the check build
// counts the barrier the compiler emitted and names the learner's call, not CUDA's line.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void reduce(const float* X, float* out, int N) {
    extern __shared__ float s[];
    cg::thread_block block = cg::this_thread_block();
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < N) ? X[i] : 0.0f;
    block.sync();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) {
            s[tid] += s[tid + half];
            block.sync();
        }
    }
    if (tid == 0) atomicAdd(out, s[0]);
}

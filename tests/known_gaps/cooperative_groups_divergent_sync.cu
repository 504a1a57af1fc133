// known gap: a divergent barrier spelled through cooperative groups. block.sync() compiles to
// __barrier_sync(0), which the barrier check does not count (it counts __syncthreads() and its
// _count/_and/_or forms), so only compute-sanitizer's synccheck could see it.
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

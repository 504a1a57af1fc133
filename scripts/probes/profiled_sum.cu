// A kernel for scripts/profiler-passes.sh: a block-tree sum with one global atomic per block over
// 2^24 floats, memory-bound as the course's reductions are, so every metric has something to count.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float partial[256];
  float mine = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) mine += in[i];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

int main() {
  const int n = 1 << 24;
  float *in = nullptr, *out = nullptr;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  cudaMemset(in, 0, n * sizeof(float));
  cudaMemset(out, 0, sizeof(float));
  block_sum<<<528, 256>>>(in, out, n);
  const cudaError_t status = cudaDeviceSynchronize();
  std::printf("block_sum: %s\n", cudaGetErrorString(status));
  return status == cudaSuccess ? 0 : 1;
}

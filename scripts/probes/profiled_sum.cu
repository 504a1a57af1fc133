// For scripts/profiler-passes.sh: the probes' block-tree sum (block_sum.cuh), one launch over
// 2^24 floats, for ncu to count its passes.
#include <cstdio>
#include <cuda_runtime.h>

#include "block_sum.cuh"

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

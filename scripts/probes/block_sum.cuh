// The probes' kernel: a block-tree sum with one global atomic per block, grid-stride, memory-bound
// as the course's reductions are, so every profiler metric has something to count. 256 threads.
#pragma once

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

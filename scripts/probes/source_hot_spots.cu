// Two kernels whose time sits on one known line each, for learning what the CUDA toolkit's
// disassembler and Nsight Compute report per source line (issue #28's hot spots). One thread of
// each block walks the block's elements alone (the serial loop), and every thread of the other
// kernel adds into one address (the contended atomic).
#include <cuda_runtime.h>

#include <cstdio>

__global__ void one_address(const float* values, float* total, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) atomicAdd(total, values[i]);  // every thread queues on *total
}

__global__ void one_thread_per_block(const float* values, float* partial, int count) {
  int first = blockIdx.x * blockDim.x;
  if (threadIdx.x != 0) return;
  float sum = 0.0f;
  for (int k = 0; k < blockDim.x; ++k)  // 255 threads of the block idle while this runs
    if (first + k < count) sum += values[first + k];
  partial[blockIdx.x] = sum;
}

int main() {
  const int count = 1 << 22, threads = 256, blocks = (count + threads - 1) / threads;
  float *values, *out;
  cudaMalloc(&values, count * sizeof(float));
  cudaMalloc(&out, blocks * sizeof(float));
  cudaMemset(values, 0, count * sizeof(float));
  cudaMemset(out, 0, blocks * sizeof(float));
  one_address<<<blocks, threads>>>(values, out, count);
  one_thread_per_block<<<blocks, threads>>>(values, out, count);
  cudaError_t status = cudaDeviceSynchronize();
  std::printf("launches: %s\n", cudaGetErrorString(status));
  return status == cudaSuccess ? 0 : 1;
}

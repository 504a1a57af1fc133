#include "compile/barrier_instrumentation.h"

#include <fmt/format.h>

#include <string>

namespace cudojo {

std::string_view barrier_check_header() {
  // Each counted barrier records before it waits, so a thread that reaches a barrier is counted
  // even if the barrier then misbehaves. The wrappers are defined before the macros, so their
  // own calls reach CUDA's real barriers.
  static const std::string header = fmt::format(
      R"(#pragma once
extern "C" {{
__device__ unsigned int {passes}[{thread_slots}u];
__device__ unsigned int {lines}[{line_slots}u];
__device__ unsigned int {shape}[2];
}}
__device__ __forceinline__ void cudojo_count_barrier(unsigned int line) {{
  const unsigned int threads = blockDim.x * blockDim.y * blockDim.z;
  const unsigned long long block =
      blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
  const unsigned long long thread =
      block * threads + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (thread < {thread_slots}ull) {passes}[thread] += 1u;
  atomicAdd(&{lines}[line < {line_slots}u ? line : 0u], 1u);
  {shape}[0] = threads;
  {shape}[1] = gridDim.x * gridDim.y * gridDim.z;
}}
__device__ __forceinline__ void cudojo_counted_syncthreads(unsigned int line) {{
  cudojo_count_barrier(line);
  __syncthreads();
}}
__device__ __forceinline__ int cudojo_counted_syncthreads_count(unsigned int line, int predicate) {{
  cudojo_count_barrier(line);
  return __syncthreads_count(predicate);
}}
__device__ __forceinline__ int cudojo_counted_syncthreads_and(unsigned int line, int predicate) {{
  cudojo_count_barrier(line);
  return __syncthreads_and(predicate);
}}
__device__ __forceinline__ int cudojo_counted_syncthreads_or(unsigned int line, int predicate) {{
  cudojo_count_barrier(line);
  return __syncthreads_or(predicate);
}}
#define __syncthreads() cudojo_counted_syncthreads(__LINE__)
#define __syncthreads_count(predicate) cudojo_counted_syncthreads_count(__LINE__, (predicate))
#define __syncthreads_and(predicate) cudojo_counted_syncthreads_and(__LINE__, (predicate))
#define __syncthreads_or(predicate) cudojo_counted_syncthreads_or(__LINE__, (predicate))
)",
      fmt::arg("passes", kBarrierPassesSymbol), fmt::arg("lines", kBarrierLinesSymbol),
      fmt::arg("shape", kBarrierShapeSymbol), fmt::arg("thread_slots", kBarrierThreadSlots),
      fmt::arg("line_slots", kBarrierLineSlots));
  return header;
}

}  // namespace cudojo

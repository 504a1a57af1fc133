#include <cub/device/device_reduce.cuh>

#include "contract/cub_baseline.h"

namespace cudojo {

std::size_t cub_sum_scratch_bytes(std::size_t max_n) {
  std::size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                         static_cast<long long>(max_n));
  return bytes;
}

void launch_cub_sum(const float* x, float* out, std::size_t n, void* scratch, std::size_t scratch_bytes,
                    cudaStream_t stream) {
  std::size_t bytes = scratch_bytes;
  cub::DeviceReduce::Sum(scratch, bytes, x, out, static_cast<long long>(n), stream);
}

}  // namespace cudojo

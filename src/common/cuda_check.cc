#include "common/cuda_check.h"

#include <fmt/format.h>

namespace cudojo {

CudaError::CudaError(cudaError_t code, const char* call, const char* file, int line)
    : std::runtime_error(fmt::format("{} failed at {}:{}: {} ({})", call, file, line, cudaGetErrorName(code),
                                     cudaGetErrorString(code))),
      code_(code) {}

void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) throw CudaError(code, call, file, line);
}

}  // namespace cudojo

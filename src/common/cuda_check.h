// One checking helper for every CUDA runtime call the judge makes. It throws a typed error that
// carries the call's text, file and line; only main() turns errors into exit codes.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace cudojo {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line);
  cudaError_t code() const { return code_; }
  // The runtime's symbolic name, e.g. "cudaErrorIllegalAddress": stable, machine-readable.
  std::string name() const { return cudaGetErrorName(code_); }

 private:
  cudaError_t code_;
};

void check_cuda(cudaError_t code, const char* call, const char* file, int line);

}  // namespace cudojo

#define CUDOJO_CUDA(call) ::cudojo::check_cuda((call), #call, __FILE__, __LINE__)

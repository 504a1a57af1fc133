// For tests that compile a kernel with NVRTC as the judge does: a request for a one-accumulator
// kernel `reduce(const float* X, float* out, int N)` in mine.cu, or for any other signature.
#pragma once

#include <string>

#include "compile/nvrtc_compiler.h"

namespace cudojo::testing {

inline CompileRequest kernel_request(const std::string& source, const std::string& kernel_name,
                                     const std::string& parameters, const std::string& pointer_type,
                                     const std::string& arch = "sm_90") {
  CompileRequest request;
  request.source = source;
  request.file_name = "mine.cu";
  request.kernel_name = kernel_name;
  request.kernel_parameters = parameters;
  request.kernel_pointer_type = pointer_type;
  request.arch = arch;
  request.cuda_include_dir = default_cuda_include_dir();
  return request;
}

inline CompileRequest accumulator_request(const std::string& source) {
  return kernel_request(source, "reduce", "const float* X, float* out, int N",
                        "void (*)(const float*, float*, int)");
}

}  // namespace cudojo::testing

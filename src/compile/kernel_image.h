// What a compile produces for the GPU, whatever the language: the loadable image (an NVRTC cubin,
// or PTX from the Python and Rust front ends, which the driver compiles when it loads it) and how
// the kernel takes its parameters.
#pragma once

#include <optional>
#include <string_view>

namespace cudojo {

enum class ImageFormat { kCubin, kPtx };

// kPlain: parameters as the CUDA C++ signature declares them, one pointer per array and one int per
// scalar (NVRTC's kernels, and Rust's extern "ptx-kernel" functions).
// kNumbaArrays: Numba passes each array as seven 64-bit fields (meminfo, parent, nitems, itemsize,
// data, shape[0], strides[0]) and each int32 as one 32-bit value.
enum class ParameterAbi { kPlain, kNumbaArrays };

std::string_view to_string(ImageFormat format);
std::string_view to_string(ParameterAbi abi);
std::optional<ImageFormat> parse_image_format(std::string_view word);
std::optional<ParameterAbi> parse_parameter_abi(std::string_view word);

}  // namespace cudojo

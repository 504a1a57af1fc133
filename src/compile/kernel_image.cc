#include "compile/kernel_image.h"

namespace cudojo {

std::string_view to_string(ImageFormat format) { return format == ImageFormat::kPtx ? "ptx" : "cubin"; }

std::string_view to_string(ParameterAbi abi) {
  return abi == ParameterAbi::kNumbaArrays ? "numba_arrays" : "plain";
}

std::optional<ImageFormat> parse_image_format(std::string_view word) {
  if (word == "cubin") return ImageFormat::kCubin;
  if (word == "ptx") return ImageFormat::kPtx;
  return std::nullopt;
}

std::optional<ParameterAbi> parse_parameter_abi(std::string_view word) {
  if (word == "plain") return ParameterAbi::kPlain;
  if (word == "numba_arrays") return ParameterAbi::kNumbaArrays;
  return std::nullopt;
}

}  // namespace cudojo

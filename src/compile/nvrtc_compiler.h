// Compiles one submission (or a reference) with NVRTC to a cubin for one GPU architecture.
// The source is scanned by include_policy first, and NVRTC looks for headers only in CUDA's folders
// and the in-memory shims. The kernel's signature is checked by the compiler itself (a check
// appended after the learner's last line that no macro can switch off, and the kernel's mangled
// name). NVRTC's log is read into diagnostics with their column and source excerpt: errors and
// warnings in the learner's file, errors inside CUDA's headers named by the header with a note at
// the learner's line they come from; diagnostics of the judge's own lines become one sentence about
// the expected kernel, and messages about NVRTC's options are put in the stage's terms. Every string
// in the result is valid UTF-8.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "compile/kernel_image.h"

namespace cudojo {

struct Diagnostic {
  Diagnostic() = default;
  Diagnostic(std::string file, int line, std::string severity, std::string message)
      : file(std::move(file)), line(line), severity(std::move(severity)), message(std::move(message)) {}

  std::string file;
  int line = 0;          // 0 when the diagnostic names no line
  std::string severity;  // "error", "warning", "catastrophic error", "remark", "note"
  std::string message;
  int column = 0;         // 1-based; 0 when the compiler names none
  std::string context{};  // the compiler's own excerpt: the source line and a caret, when it gives one
};

struct CompileRequest {
  std::string source;
  std::string file_name = "submission.cu";  // as the learner's diagnostics will name it
  std::string kernel_name;
  std::string kernel_parameters;    // "const float* X, float* out, int N", for messages
  std::string kernel_pointer_type;  // "void (*)(const float*, float*, int)"
  std::string arch = "sm_90";
  std::string cuda_include_dir;  // the toolkit's include/ (cooperative_groups, cuda/std, cub)
  // Source size is judged before a compile is asked for (source_size_error in common/limits.h).
  std::size_t max_log_bytes = kDefaultLimits.max_compile_log_bytes;
  // A judge header compiled in front of the source (NVRTC --pre-include), from memory; empty: none.
  std::string pre_include_name;
  std::string pre_include_text;
};

struct CompileResult {
  bool ok = false;
  std::string log;  // NVRTC's log (capped), or the judge's own refusal
  std::vector<Diagnostic> diagnostics;
  std::vector<char> image;  // what the GPU loads; PTX text ends with a NUL
  ImageFormat format = ImageFormat::kCubin;
  ParameterAbi abi = ParameterAbi::kPlain;
  std::string lowered_name;   // the symbol to load: "reduce" or its mangled C++ name
  std::string ptx;            // the module's PTX, when the compiler gives it (static checks read it)
  int source_file_index = 1;  // PTX: the `.file` number of the learner's lines
  double compile_ms = 0;
};

CompileResult compile_kernel(const CompileRequest& request);

// Parses NVRTC's log ("file(12): error: message", "file(3): warning #177-D: message", the source
// line and caret after each, notes) into diagnostics as NVRTC names them, nothing filtered.
std::vector<Diagnostic> parse_nvrtc_log(const std::string& log);

// The Itanium ABI name of a C++ kernel `kernel` whose type is `pointer_type`
// ("reduce", "void (*)(const float*, float*, int)" -> "_Z6reducePKfPfi"); nothing when a parameter
// type is not a builtin, a pointer or a CUDA vector type (a typedef mangles as what it names).
std::optional<std::string> itanium_kernel_name(std::string_view kernel, std::string_view pointer_type);

// NVRTC's version, e.g. "13.0".
std::string nvrtc_version();

// The CUDA include folder: $CUDOJO_CUDA_INCLUDE, else the toolkit found at build time, else
// /usr/local/cuda/include.
std::string default_cuda_include_dir();

// A learner's file name made safe to appear in diagnostics ("../x y.cu" -> "x_y.cu").
std::string sanitize_file_name(const std::string& path);

}  // namespace cudojo

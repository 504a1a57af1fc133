// Every environment variable cudojo reads, in one list: the code names them through env::k*, and
// `cudojo --help` prints the list, so none is undocumented.
#pragma once

#include <span>
#include <string_view>

namespace cudojo {

namespace env {
inline constexpr const char* kCourse = "CUDOJO_COURSE";
inline constexpr const char* kCalibration = "CUDOJO_CALIBRATION";
inline constexpr const char* kData = "CUDOJO_DATA";
inline constexpr const char* kWeb = "CUDOJO_WEB";
inline constexpr const char* kStore = "CUDOJO_STORE";
inline constexpr const char* kCudaInclude = "CUDOJO_CUDA_INCLUDE";
inline constexpr const char* kComputeSanitizer = "CUDOJO_COMPUTE_SANITIZER";
inline constexpr const char* kNcu = "CUDOJO_NCU";
inline constexpr const char* kPtxas = "CUDOJO_PTXAS";
inline constexpr const char* kNvdisasm = "CUDOJO_NVDISASM";
inline constexpr const char* kProfiler = "CUDOJO_PROFILER";
inline constexpr const char* kKeepSanitizerLogs = "CUDOJO_KEEP_SANITIZER_LOGS";
inline constexpr const char* kNoColor = "NO_COLOR";
// Set by cudojo for the workers a tool starts (compute-sanitizer, ncu): the judge's pid.
inline constexpr const char* kJudgePid = "CUDOJO_JUDGE_PID";
// Set by cudojo for a kept sanitizer worker: its tool, and the mark that ends a job in its log.
inline constexpr const char* kToolName = "CUDOJO_TOOL";
inline constexpr const char* kToolMark = "CUDOJO_TOOL_MARK";
}  // namespace env

struct EnvironmentVariable {
  std::string_view name;
  std::string_view meaning;
};

std::span<const EnvironmentVariable> environment_variables();

}  // namespace cudojo

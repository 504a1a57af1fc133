#include "run/tool_marks.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <random>

#include "common/environment.h"
#include "compile/nvrtc_compiler.h"
#include "gpu/gpu.h"

namespace cudojo {

namespace {

constexpr std::string_view kRaceMarkPrefix = "cudojo_tool_mark_";
constexpr std::size_t kMaxMarkName = 64;

bool is_kernel_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxMarkName || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Two warps write one shared word with no barrier: racecheck reports a write-write hazard for
// every launch (it does not fold a repeated hazard into an earlier report).
std::unique_ptr<LoadedKernel> build_race_mark(const std::string& name, const GpuSession& gpu) {
  CompileRequest request;
  request.source = fmt::format(
      "extern \"C\" __global__ void {}() {{\n"
      "  __shared__ int word;\n"
      "  volatile int* shared_word = &word;\n"
      "  *shared_word = threadIdx.x;\n"
      "}}\n",
      name);
  request.file_name = "cudojo_tool_mark.cu";
  request.kernel_name = name;
  request.kernel_pointer_type = "void (*)()";
  request.arch = gpu.info().arch;
  request.cuda_include_dir = default_cuda_include_dir();
  const CompileResult compiled = compile_kernel(request);
  if (!compiled.ok) return nullptr;
  return std::make_unique<LoadedKernel>(compiled.image, compiled.lowered_name, 0, compiled.abi);
}

// This worker's racecheck mark, built on first use (prepare_tool_log_mark() does it at start-up) and
// never unloaded: the library outlives each job's session (the context stays), and unloading it
// from a static destructor could run after CUDA's own teardown. Null when this worker needs none.
const LoadedKernel* race_mark_kernel(const GpuSession& gpu) {
  static const LoadedKernel* kernel = [&]() -> const LoadedKernel* {
    const char* tool = std::getenv(env::kToolName);
    const char* mark = std::getenv(env::kToolMark);
    if (!tool || !mark || std::string_view(tool) != "racecheck" || !is_kernel_name(mark)) return nullptr;
    try {
      return build_race_mark(mark, gpu).release();
    } catch (const std::exception&) {
      return nullptr;  // no mark: the parent stops keeping racecheck's workers
    }
  }();
  return kernel;
}

}  // namespace

std::string new_tool_mark(std::string_view tool) {
  if (tool == "memcheck") return kFailedCallMark;
  if (tool == "racecheck") {
    std::random_device random;
    const std::uint64_t nonce = (std::uint64_t{random()} << 32) ^ random();
    return fmt::format("{}{:016x}", kRaceMarkPrefix, nonce);
  }
  return {};
}

std::optional<std::size_t> find_tool_log_mark(const std::string& log, const std::string& mark) {
  if (mark.empty()) return std::nullopt;
  for (std::size_t at = log.find(mark); at != std::string::npos; at = log.find(mark, at + 1)) {
    const std::size_t newline = log.rfind('\n', at);
    const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
    const std::string_view before(log.data() + start, at - start);
    if (before.rfind("=========", 0) != 0) continue;
    if (before.find("Program hit") != std::string_view::npos ||
        before.find("Race reported between") != std::string_view::npos)
      return start;
  }
  return std::nullopt;
}

bool tool_log_has_report(std::string_view part) {
  std::size_t start = 0;
  while (start < part.size()) {
    std::size_t end = part.find('\n', start);
    if (end == std::string_view::npos) end = part.size();
    std::string_view line = part.substr(start, end - start);
    start = end + 1;
    if (line.rfind("=========", 0) != 0) continue;
    line.remove_prefix(9);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (line.find("COMPUTE-SANITIZER") != std::string_view::npos) continue;
    return true;
  }
  return false;
}

std::string without_tool_mark_reports(const std::string& log, const std::string& mark) {
  if (mark.empty()) return log;
  std::string kept;
  bool in_mark = false;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    end = end == std::string::npos ? log.size() : end + 1;
    const std::string_view line(log.data() + start, end - start);
    start = end;
    const bool opens_report = line.rfind("=========", 0) == 0 && line.size() > 10 && line[9] == ' ' &&
                              line[10] != ' ' && line[10] != '\n' && line[10] != '\r';
    if (opens_report) in_mark = line.find(mark) != std::string_view::npos;
    if (!in_mark) kept.append(line);
  }
  return kept;
}

void prepare_tool_log_mark(const GpuSession& gpu) { (void)race_mark_kernel(gpu); }

void leave_tool_log_mark(GpuSession& gpu) {
  const char* tool = std::getenv(env::kToolName);
  const char* mark = std::getenv(env::kToolMark);
  if (!tool || !mark) return;
  const std::string_view name(tool);
  if (name == "memcheck") {
    cudaFuncAttributes attributes{};
    (void)cudaFuncGetAttributes(&attributes, nullptr);
    (void)cudaGetLastError();
    return;
  }
  const LoadedKernel* race_mark = race_mark_kernel(gpu);
  if (!race_mark) return;
  race_mark->launch(dim3(1), dim3(64), 0, static_cast<void**>(nullptr), gpu.stream());
  gpu.sync_judge();
}

}  // namespace cudojo

#include "compile/nvrtc_compiler.h"

#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "common/environment.h"
#include "compile/include_policy.h"

namespace cudojo {

namespace {

int count_lines(const std::string& text) {
  if (text.empty()) return 0;
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? lines : lines + 1;
}

CompileResult refusal(std::string log, std::vector<Diagnostic> diagnostics) {
  CompileResult result;
  result.ok = false;
  result.log = std::move(log);
  result.diagnostics = std::move(diagnostics);
  return result;
}

std::string cap(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  text.resize(limit);
  text += "\n[log truncated]\n";
  return text;
}

// RAII owner of an nvrtcProgram.
class Program {
 public:
  Program(const std::string& source, const std::string& name, const CompileRequest& request) {
    std::vector<const char*> header_texts;
    std::vector<const char*> header_names;
    for (const auto& shim : shim_headers()) {
      header_texts.push_back(shim.content.data());
      header_names.push_back(shim.name.data());
    }
    if (!request.pre_include_name.empty()) {
      header_texts.push_back(request.pre_include_text.c_str());
      header_names.push_back(request.pre_include_name.c_str());
    }
    status_ =
        nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), static_cast<int>(header_texts.size()),
                           header_texts.data(), header_names.data());
  }
  ~Program() {
    if (status_ == NVRTC_SUCCESS) nvrtcDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcResult status() const { return status_; }
  nvrtcProgram get() const { return program_; }

  std::string log() const {
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    nvrtcGetProgramLog(program_, log.data());
    log.resize(size - 1);
    return log;
  }

 private:
  nvrtcProgram program_{};
  nvrtcResult status_;
};

// Splits NVRTC's log into blocks (one diagnostic with its source excerpt each).
std::vector<std::string> log_blocks(const std::string& log) {
  std::vector<std::string> blocks;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find("\n\n", start);
    if (end == std::string::npos) end = log.size();
    std::string block = log.substr(start, end - start);
    if (!block.empty()) blocks.push_back(block);
    start = end + 2;
  }
  return blocks;
}

}  // namespace

std::vector<Diagnostic> parse_nvrtc_log(const std::string& log) {
  static const std::regex kLine(R"(^(.+?)\((\d+)\): (catastrophic error|error|warning|remark): (.*)$)");
  std::vector<Diagnostic> diagnostics;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_match(line, match, kLine)) {
      diagnostics.push_back({match[1], std::stoi(match[2]), match[3], match[4]});
    }
  }
  return diagnostics;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::string default_cuda_include_dir() {
  if (const char* env = std::getenv(env::kCudaInclude); env && *env) return env;
  if (std::filesystem::exists(std::filesystem::path(CUDOJO_CUDA_INCLUDE_DEFAULT) / "cuda_runtime.h")) {
    return CUDOJO_CUDA_INCLUDE_DEFAULT;
  }
  return "/usr/local/cuda/include";
}

std::string sanitize_file_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  if (name.empty() || name.front() == '.') name = "submission.cu";
  if (name.size() > 64) name = name.substr(0, 64);
  return name;
}

CompileResult compile_kernel(const CompileRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  if (request.source.find('\0') != std::string::npos) {
    return refusal(fmt::format("{}: the source contains a NUL byte; submit a text file", request.file_name),
                   {{request.file_name, 0, "error", "source contains a NUL byte"}});
  }
  if (!std::regex_match(request.arch, std::regex(R"(sm_\d{2,3}a?)"))) {
    return refusal(fmt::format("unknown GPU architecture '{}'", request.arch), {});
  }

  IncludeScan scan = scan_includes(request.source);
  if (!scan.ok()) {
    std::string log;
    std::vector<Diagnostic> diagnostics;
    for (const auto& refused : scan.refused) {
      log += fmt::format("{}({}): error: {}\n  {}\n\n", request.file_name, refused.line, refused.reason,
                         refused.text);
      diagnostics.push_back({request.file_name, refused.line, "error", refused.reason});
    }
    log += "The source was refused before compiling; nothing was read from the host.\n";
    return refusal(std::move(log), std::move(diagnostics));
  }

  // The signature check sits after the learner's last line, so every learner line keeps its number.
  const int learner_lines = count_lines(request.source);
  std::string program_text = request.source;
  if (!program_text.empty() && program_text.back() != '\n') program_text += '\n';
  program_text += fmt::format(
      "namespace cudojo_signature_check {{\n"
      "template <class A, class B> struct same {{ static constexpr bool value = false; }};\n"
      "template <class A> struct same<A, A> {{ static constexpr bool value = true; }};\n"
      "static_assert(same<decltype(&::{}), {}>::value, \"kernel signature\");\n"
      "}}\n",
      request.kernel_name, request.kernel_pointer_type);

  Program program(program_text, request.file_name, request);
  if (program.status() != NVRTC_SUCCESS) {
    throw std::runtime_error(fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(program.status())));
  }
  nvrtcAddNameExpression(program.get(), request.kernel_name.c_str());

  const std::string arch_option = "-arch=" + request.arch;
  const std::string include_option = "-I" + request.cuda_include_dir;
  const std::string cccl_option = "-I" + request.cuda_include_dir + "/cccl";
  std::vector<const char*> options = {arch_option.c_str(),    "-lineinfo",         "-std=c++17",
                                      include_option.c_str(), cccl_option.c_str(), "-DCUDOJO=1"};
  const std::string pre_include_option = "--pre-include=" + request.pre_include_name;
  if (!request.pre_include_name.empty()) options.push_back(pre_include_option.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(program.get(), static_cast<int>(options.size()), options.data());

  CompileResult result;
  const std::string raw_log = program.log();

  // Keep the learner's own diagnostics and those inside CUDA's headers; rewrite those from the
  // judge's appended lines or NVRTC's name map into one sentence about the expected kernel.
  // Anything naming another file would mean a host file was read: drop the log entirely.
  const std::string expected_kernel =
      fmt::format("__global__ void {}({})", request.kernel_name, request.kernel_parameters);
  bool signature_problem = false;
  bool foreign_file = false;
  std::string kept_log;
  for (const auto& block : log_blocks(raw_log)) {
    auto diagnostics = parse_nvrtc_log(block.substr(0, block.find('\n')));
    if (diagnostics.empty()) {
      kept_log += block + "\n\n";
      continue;
    }
    Diagnostic& diagnostic = diagnostics.front();
    const bool in_learner_file = diagnostic.file == request.file_name;
    if ((in_learner_file && diagnostic.line > learner_lines) || diagnostic.file == "__nv_name_map") {
      signature_problem = true;
      continue;
    }
    const bool in_cuda_headers = diagnostic.file.starts_with(request.cuda_include_dir + "/");
    const bool in_shim = std::any_of(shim_headers().begin(), shim_headers().end(),
                                     [&](const ShimHeader& shim) { return shim.name == diagnostic.file; });
    if (!in_learner_file && !in_cuda_headers && !in_shim) {
      foreign_file = true;
      continue;
    }
    result.diagnostics.push_back(diagnostic);
    kept_log += block + "\n\n";
  }
  if (signature_problem) {
    std::string message = fmt::format(
        "no kernel matching `{}` was found; the stage's driver launches exactly that signature "
        "(extern \"C\" is optional, the name and parameter types must match)",
        expected_kernel);
    result.diagnostics.push_back({request.file_name, 0, "error", message});
    kept_log += fmt::format("{}: error: {}\n", request.file_name, message);
  }
  if (foreign_file) {
    result.diagnostics.clear();
    kept_log =
        "the compiler reported a diagnostic from a file outside the allowed headers; the log "
        "was withheld\n";
    result.diagnostics.push_back({request.file_name, 0, "error", kept_log});
  }
  result.log = cap(std::move(kept_log), request.max_log_bytes);

  if (compiled == NVRTC_SUCCESS && !signature_problem && !foreign_file) {
    const char* lowered = nullptr;
    if (nvrtcGetLoweredName(program.get(), request.kernel_name.c_str(), &lowered) == NVRTC_SUCCESS &&
        lowered) {
      result.lowered_name = lowered;
    }
    std::size_t cubin_size = 0;
    if (nvrtcGetCUBINSize(program.get(), &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
      result.image.resize(cubin_size);
      nvrtcGetCUBIN(program.get(), result.image.data());
    }
    result.ok = !result.lowered_name.empty() && !result.image.empty();
    if (!result.ok) {
      result.diagnostics.push_back({request.file_name, 0, "error",
                                    fmt::format("NVRTC produced no kernel named {}", request.kernel_name)});
    }
  }
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace cudojo

#include "run/compile_child.h"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iostream>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>

#include "compile/kernel_image.h"
#include "report/report.h"
#include "run/process.h"
#include "run/protocol.h"

namespace cudojo {

namespace {

nlohmann::json request_json(const CompileRequest& request, const JudgeLimits& limits) {
  return {{"source", request.source},
          {"file_name", request.file_name},
          {"kernel_name", request.kernel_name},
          {"kernel_parameters", request.kernel_parameters},
          {"kernel_pointer_type", request.kernel_pointer_type},
          {"arch", request.arch},
          {"cuda_include_dir", request.cuda_include_dir},
          {"max_log_bytes", request.max_log_bytes},
          {"pre_include_name", request.pre_include_name},
          {"pre_include_text", request.pre_include_text},
          {"memory_bytes", limits.compile_memory_bytes},
          {"cpu_seconds", static_cast<long>(std::ceil(limits.compile_budget_ms / 1000.0))}};
}

CompileRequest request_from_json(const nlohmann::json& j) {
  CompileRequest request;
  j.at("source").get_to(request.source);
  j.at("file_name").get_to(request.file_name);
  j.at("kernel_name").get_to(request.kernel_name);
  j.at("kernel_parameters").get_to(request.kernel_parameters);
  j.at("kernel_pointer_type").get_to(request.kernel_pointer_type);
  j.at("arch").get_to(request.arch);
  j.at("cuda_include_dir").get_to(request.cuda_include_dir);
  j.at("max_log_bytes").get_to(request.max_log_bytes);
  j.at("pre_include_name").get_to(request.pre_include_name);
  j.at("pre_include_text").get_to(request.pre_include_text);
  return request;
}

nlohmann::json result_json(const CompileResult& result) {
  return {{"ok", result.ok},
          {"log", result.log},
          {"diagnostics", result.diagnostics},
          {"image_base64", encode_base64(result.image)},
          {"format", to_string(result.format)},
          {"abi", to_string(result.abi)},
          {"lowered_name", result.lowered_name},
          {"ptx", result.ptx},
          {"source_file_index", result.source_file_index},
          {"compile_ms", result.compile_ms}};
}

CompileResult result_from_json(const nlohmann::json& j) {
  CompileResult result;
  j.at("ok").get_to(result.ok);
  j.at("log").get_to(result.log);
  j.at("diagnostics").get_to(result.diagnostics);
  result.image = decode_base64(j.at("image_base64").get<std::string>());
  result.format = parse_image_format(j.at("format").get<std::string>()).value_or(ImageFormat::kCubin);
  result.abi = parse_parameter_abi(j.at("abi").get<std::string>()).value_or(ParameterAbi::kPlain);
  j.at("lowered_name").get_to(result.lowered_name);
  j.at("ptx").get_to(result.ptx);
  j.at("source_file_index").get_to(result.source_file_index);
  j.at("compile_ms").get_to(result.compile_ms);
  return result;
}

// A compile the child could not finish, as the learner sees it: an error at no particular line.
CompileResult stopped(const CompileRequest& request, const std::string& why) {
  CompileResult result;
  result.log = fmt::format("{}: {}", request.file_name, why);
  result.diagnostics.push_back({request.file_name, 0, "error", why});
  return result;
}

std::string limits_sentence(const JudgeLimits& limits) {
  return fmt::format("{:g} s and {} MiB", limits.compile_budget_ms / 1000.0,
                     limits.compile_memory_bytes >> 20);
}

// NVRTC that meets the child's address-space limit often says so itself and answers (a template
// that instantiates itself without end): its "out of memory" is then the budget's doing, and the
// learner is told which budget, before NVRTC's own words and its instantiation context.
void name_the_memory_budget(const CompileRequest& request, const JudgeLimits& limits, CompileResult& result) {
  const bool out_of_memory =
      std::any_of(result.diagnostics.begin(), result.diagnostics.end(), [](const Diagnostic& d) {
        return d.severity == "catastrophic error" && d.message.starts_with("out of memory");
      });
  if (result.ok || !out_of_memory) return;
  const std::string why = fmt::format(
      "the compiler ran out of memory within its limits of {}, the compile budget: "
      "the source asks for more than any kernel needs (a template or macro that "
      "expands without end, a huge initialized array?)",
      limits_sentence(limits));
  result.log = fmt::format("{}: {}\n{}", request.file_name, why, result.log);
  result.diagnostics.insert(result.diagnostics.begin(), {request.file_name, 0, "error", why});
}

}  // namespace

CompileResult compile_in_child(const CompileRequest& request, const JudgeLimits& limits) {
  using Clock = WorkerProcess::Clock;
  const auto started = Clock::now();
  WorkerProcess child({"/proc/self/exe", "nvrtc-compile"}, limits.max_compile_log_bytes);
  child.send_job(request_json(request, limits).dump());
  const auto deadline = started + std::chrono::milliseconds(static_cast<long long>(limits.compile_budget_ms));
  std::string line;
  const auto waited = child.next_message(deadline, line);
  if (waited == WorkerProcess::Wait::kMessage) {
    try {
      CompileResult result = result_from_json(nlohmann::json::parse(line));
      child.wait();
      name_the_memory_budget(request, limits, result);
      return result;
    } catch (const std::exception&) {
      // A garbled answer is the judge's own failure, reported below like a dead child.
    }
  }
  child.kill();
  const WorkerProcess::Exit exit = child.wait();
  if (waited == WorkerProcess::Wait::kDeadline) {
    return stopped(request, fmt::format("the compiler was stopped after {:g} s, the compile budget: the "
                                        "source asks the compiler for more work than any kernel needs",
                                        limits.compile_budget_ms / 1000.0));
  }
  return stopped(request, fmt::format("the compiler stopped ({}) within its limits of {}: the source asks "
                                      "for more memory or time than any kernel needs (a huge initialized "
                                      "array, a template or macro that expands without end?)",
                                      exit.describe(), limits_sentence(limits)));
}

int compile_child_main() {
  // Dies with the worker that started it: a killed worker leaves no compile running.
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 0;
  CompileRequest request;
  nlohmann::json job;
  try {
    const std::string text{std::istreambuf_iterator<char>(std::cin), {}};
    job = nlohmann::json::parse(text);
    request = request_from_json(job);
  } catch (const std::exception& error) {
    std::cerr << "cudojo nvrtc-compile: bad request: " << error.what() << "\n";
    return 2;
  }
  const rlim_t memory = job.at("memory_bytes").get<std::uint64_t>();
  const rlim_t cpu = static_cast<rlim_t>(job.at("cpu_seconds").get<long>());
  const rlimit memory_limit{memory, memory}, cpu_limit{cpu, cpu + 1}, no_core{0, 0};
  setrlimit(RLIMIT_AS, &memory_limit);
  setrlimit(RLIMIT_CPU, &cpu_limit);
  setrlimit(RLIMIT_CORE, &no_core);
  CompileResult result;
  try {
    result = compile_kernel(request);
  } catch (const std::bad_alloc&) {
    result = stopped(request, fmt::format("the compiler ran out of memory ({} MiB is the limit): the source "
                                          "asks for more than any kernel needs (a huge initialized array?)",
                                          memory >> 20));
  }
  const std::string line = result_json(result).dump() + "\n";
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(3, line.data() + written, line.size() - written);
    if (n <= 0) return 1;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace cudojo

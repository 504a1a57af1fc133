#include "run/build.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "compile/frontend.h"
#include "compile/nvrtc_compiler.h"
#include "run/compile_child.h"
#include "run/worker_builds.h"
#include "stage/contract_info.h"

namespace cudojo {

namespace {

// Bumped when a build file's meaning changes; an older file is refused with a clear message.
// 2: the counted build is the check build (barrier and warp-mask counters in the PTX).
constexpr int kBuildFormat = 2;

BuiltKernel built_from(const CompileResult& compiled) {
  return BuiltKernel{compiled.lowered_name, compiled.image, compiled.format, compiled.abi};
}

// The compile's record for the report; nvrtc names the NVRTC that will also compile the reference.
void record(const CompileResult& compiled, CompileInfo& info) {
  info.ok = compiled.ok;
  info.nvrtc = nvrtc_version();
  info.log = compiled.log;
  info.diagnostics = compiled.diagnostics;
  info.compile_ms = compiled.compile_ms;
}

// A module that takes one of the judge's counter names is a compile error (run/worker_builds.h).
bool refused_for_judge_names(const CompileResult& compiled, std::string_view ptx,
                             const std::string& file_name, CompileInfo& info) {
  CompileResult refused = compiled;
  refused.ptx = std::string(ptx);
  refuse_judge_names(refused, file_name);
  if (refused.ok) return false;
  record(refused, info);
  return true;
}

void build_cuda(const BuildRequest& request, const ContractInfo& contract, SubmissionBuild& build) {
  CompileRequest compile;
  compile.source = request.source;
  compile.file_name = request.file_name;
  compile.kernel_name = request.stage->kernel;
  compile.kernel_parameters = std::string(contract.parameters);
  compile.kernel_pointer_type = std::string(contract.pointer_type);
  compile.arch = request.arch;
  compile.cuda_include_dir = request.cuda_include_dir;
  compile.max_log_bytes = request.limits.max_compile_log_bytes;
  // In a child under the compile budget, as the worker compiles: a template bomb ends as a compile
  // error within compile_budget_ms and compile_memory_bytes instead of growing without bound here.
  const CompileResult plain = compile_in_child(compile, request.limits);
  record(plain, build.compile);
  if (!plain.ok || refused_for_judge_names(plain, plain.ptx, request.file_name, build.compile)) return;
  build.submission = built_from(plain);
  build.ptx = plain.ptx;
  if (contract.has_second_kernel()) {
    CompileRequest second = compile;
    second.kernel_name = request.stage->second_kernel;
    second.kernel_parameters = std::string(contract.second.parameters);
    second.kernel_pointer_type = std::string(contract.second.pointer_type);
    const CompileResult compiled = compile_in_child(second, request.limits);
    if (!compiled.ok) {
      record(compiled, build.compile);
      build.submission.reset();
      return;
    }
    build.second = built_from(compiled);
    build.second_ptx = compiled.ptx;
  }
  build.counted = check_build_of(plain, request.file_name, build.counted_note);
}

void build_with_frontend(const BuildRequest& request, const ContractInfo& contract, SubmissionBuild& build) {
  FrontendRequest frontend;
  frontend.kernel_name = request.stage->kernel;
  frontend.parameters = contract.kernel_parameters;
  frontend.language = request.language;
  frontend.source = request.source;
  frontend.file_name = request.file_name;
  frontend.arch = request.arch;
  if (!request.cuda_include_dir.empty()) {
    frontend.cuda_home = std::filesystem::path(request.cuda_include_dir).parent_path().string();
  }
  frontend.time_limit = std::chrono::milliseconds(static_cast<long long>(request.limits.frontend_budget_ms));
  frontend.memory_bytes = request.limits.frontend_memory_bytes;
  frontend.max_log_bytes = request.limits.max_compile_log_bytes;
  frontend.max_processes = request.limits.frontend_max_processes;
  frontend.max_answer_bytes = request.limits.frontend_max_answer_bytes;
  const FrontendResult result = compile_with_frontend(frontend);
  if (result.judge_failure) throw std::runtime_error(result.compile.log);
  const CompileResult& compiled = result.compile;
  record(compiled, build.compile);
  if (!compiled.ok) return;
  const std::string_view ptx(compiled.image.data(), compiled.image.size() - 1);  // without the NUL
  if (refused_for_judge_names(compiled, ptx, request.file_name, build.compile)) return;
  build.submission = built_from(compiled);
  build.ptx = std::string(ptx);
  if (contract.has_second_kernel()) {
    // The front ends compile one entry per run; the second kernel is a second run on the same file.
    FrontendRequest second = frontend;
    second.kernel_name = request.stage->second_kernel;
    second.parameters = contract.second.kernel_parameters;
    const FrontendResult second_result = compile_with_frontend(second);
    if (second_result.judge_failure) throw std::runtime_error(second_result.compile.log);
    if (!second_result.compile.ok) {
      record(second_result.compile, build.compile);
      build.submission.reset();
      return;
    }
    build.compile.compile_ms += second_result.compile.compile_ms;
    build.second = built_from(second_result.compile);
    const std::vector<char>& second_image = second_result.compile.image;
    build.second_ptx = std::string(second_image.data(), second_image.size() - 1);
  }
  CompileResult with_ptx = compiled;
  with_ptx.ptx = std::string(ptx);
  build.counted = check_build_of(with_ptx, request.file_name, build.counted_note);
}

}  // namespace

SubmissionBuild build_submission(const BuildRequest& request) {
  if (!request.stage) throw std::invalid_argument("build_submission needs a stage");
  const ContractInfo* contract = find_contract_info(request.stage->contract);
  if (!contract) throw std::runtime_error("the stage names an unknown contract: " + request.stage->contract);
  SubmissionBuild build;
  build.stage = request.stage->id;
  build.language = request.language;
  build.file_name = request.file_name;
  build.source = request.source;
  build.compile.arch = request.arch;
  if (auto too_large = source_size_error(request.source.size(), request.limits)) {
    build.compile.log = fmt::format("{}: {}", request.file_name, *too_large);
    build.compile.diagnostics.push_back({request.file_name, 0, "error", *too_large});  // names it once
    return build;
  }
  if (request.language == Language::kCuda) {
    build_cuda(request, *contract, build);
  } else {
    build_with_frontend(request, *contract, build);
  }
  return build;
}

void to_json(nlohmann::json& j, const SubmissionBuild& build) {
  j = {{"cudojo_build", kBuildFormat},
       {"stage", build.stage},
       {"language", to_string(build.language)},
       {"file_name", build.file_name},
       {"source", build.source},
       {"compile",
        {{"ok", build.compile.ok},
         {"arch", build.compile.arch},
         {"nvrtc", build.compile.nvrtc},
         {"log", build.compile.log},
         {"diagnostics", build.compile.diagnostics},
         {"compile_ms", build.compile.compile_ms}}},
       {"submission", build.submission ? nlohmann::json(*build.submission) : nlohmann::json(nullptr)},
       {"counted", build.counted ? nlohmann::json(*build.counted) : nlohmann::json(nullptr)},
       {"second", build.second ? nlohmann::json(*build.second) : nlohmann::json(nullptr)},
       {"counted_note", build.counted_note}};
}

void from_json(const nlohmann::json& j, SubmissionBuild& build) {
  if (!j.is_object() || !j.contains("cudojo_build")) {
    throw std::runtime_error(
        "this is not a cudojo build file (make one with `cudojo build STAGE FILE -o FILE`)");
  }
  if (j.at("cudojo_build") != kBuildFormat) {
    throw std::runtime_error(fmt::format(
        "this build file has format {}; this cudojo reads format {}: build it again with `cudojo build`",
        j.at("cudojo_build").dump(), kBuildFormat));
  }
  try {
    j.at("stage").get_to(build.stage);
    const auto language = parse_language(j.at("language").get<std::string>());
    if (!language) throw std::runtime_error("unknown language " + j.at("language").dump());
    build.language = *language;
    j.at("file_name").get_to(build.file_name);
    j.at("source").get_to(build.source);
    const auto& compile = j.at("compile");
    compile.at("ok").get_to(build.compile.ok);
    compile.at("arch").get_to(build.compile.arch);
    build.compile.nvrtc = compile.value("nvrtc", "");
    compile.at("log").get_to(build.compile.log);
    compile.at("diagnostics").get_to(build.compile.diagnostics);
    build.compile.compile_ms = compile.value("compile_ms", 0.0);
    if (!j.at("submission").is_null()) build.submission = j.at("submission").get<BuiltKernel>();
    if (!j.at("counted").is_null()) build.counted = j.at("counted").get<BuiltKernel>();
    if (j.contains("second") && !j.at("second").is_null()) build.second = j.at("second").get<BuiltKernel>();
    build.counted_note = j.value("counted_note", "");
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(std::string("the build file is damaged: ") + error.what());
  }
  if (build.compile.ok && !build.submission)
    throw std::runtime_error("the build file says ok but holds no kernel");
}

}  // namespace cudojo

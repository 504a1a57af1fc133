#include "cli/build_command.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_text.h"
#include "compile/nvrtc_compiler.h"

namespace cudojo::cli {

namespace {

// A build holds at most three kernels, each at most the front ends' 4 MiB of PTX (base64 for a
// cubin): far below this.
constexpr std::size_t kMaxBuildFileBytes = 64u << 20;

}  // namespace

void print_diagnostics(const CompileInfo& compile) {
  for (const auto& d : compile.diagnostics) {
    const std::string where = d.line <= 0    ? d.file
                              : d.column > 0 ? fmt::format("{}:{}:{}", d.file, d.line, d.column)
                                             : fmt::format("{}:{}", d.file, d.line);
    std::cout << fmt::format("{}: {}: {}\n", where, d.severity, d.message);
    std::istringstream context(d.context);
    for (std::string line; std::getline(context, line);) std::cout << "    | " << line << "\n";
  }
  if (!compile.ok && compile.diagnostics.empty())
    std::cout << compile.log << (compile.log.ends_with("\n") ? "" : "\n");
}

SubmissionBuild read_build_file(const std::string& path) {
  const std::string text = read_regular_file(path, kMaxBuildFileBytes);
  if (text.size() > kMaxBuildFileBytes) {
    throw UsageError(fmt::format("'{}' is larger than {} MiB, so not a cudojo build file", path,
                                 kMaxBuildFileBytes >> 20));
  }
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded())
    throw UsageError(fmt::format("'{}' is not JSON, so not a cudojo build file", path));
  try {
    return parsed.get<SubmissionBuild>();
  } catch (const std::exception& error) {
    throw UsageError(fmt::format("{}: {}", path, error.what()));
  }
}

int cmd_build(const Stage& stage, const SubmissionFile& submission, Language language,
              const std::string& arch, const std::string& output, bool json) {
  BuildRequest request;
  request.stage = &stage;
  request.language = language;
  request.source = submission.source;
  request.file_name = submission.file_name;
  request.arch = arch.empty() ? "sm_90" : require_arch(arch);
  request.cuda_include_dir = default_cuda_include_dir();
  SubmissionBuild build = build_submission(request);
  state_real_size(build.compile, submission, request.limits);
  const nlohmann::json written = build;
  // A failed compile writes nothing: a build file always holds a kernel a GPU machine can run.
  if (build.compile.ok) {
    std::ofstream out(output, std::ios::binary);
    out << json_text(written) << "\n";
    if (!out) throw UsageError(fmt::format("cannot write '{}'", output));
  }
  if (json) {
    nlohmann::json summary = {{"output", build.compile.ok ? nlohmann::json(output) : nlohmann::json()},
                              {"stage", build.stage},
                              {"language", to_string(build.language)},
                              {"compile", written.at("compile")},
                              {"counted", build.counted.has_value()},
                              {"counted_note", build.counted_note}};
    if (build.submission) {
      summary["format"] = to_string(build.submission->format);
      summary["abi"] = to_string(build.submission->abi);
      summary["entry"] = build.submission->lowered_name;
    }
    std::cout << summary.dump(2) << "\n";
  } else if (build.compile.ok) {
    print_diagnostics(build.compile);  // its warnings
    std::cout << fmt::format(
        "built {} ({}) for {} {}: {} {} bytes, entry {}, barrier-check build {}; {:.0f} ms\n"
        "run it on a GPU machine with:  cudojo check {} --build {}\n",
        build.file_name, display_name(language), stage.id, request.arch, to_string(build.submission->format),
        build.submission->image.size(), build.submission->lowered_name,
        build.counted ? "made" : "not made: " + build.counted_note, build.compile.compile_ms, stage.id,
        output);
  } else {
    print_diagnostics(build.compile);
    std::cout << fmt::format("{} did not compile; nothing written to {}\n", build.file_name, output);
  }
  return build.compile.ok ? 0 : 1;
}

}  // namespace cudojo::cli

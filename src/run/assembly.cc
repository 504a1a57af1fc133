#include "run/assembly.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/environment.h"
#include "compile/nvrtc_compiler.h"
#include "compile/ptx_lines.h"
#include "run/build.h"
#include "run/tools.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

// The entry `lowered` of a module's report, or its only entry.
std::optional<KernelResources> entry_of(const ResourceReport& report, const std::string& lowered) {
  for (const auto& kernel : report.kernels)
    if (kernel.kernel == lowered) return kernel;
  if (report.kernels.size() == 1) return report.kernels.front();
  return std::nullopt;
}

// Each module of `build` through ptxas; its cubins are kept in `cubins` when asked (the learner's).
void add_kernels(const std::string& whose, const SubmissionBuild& build, const Stage& stage,
                 const std::string& ptxas, const JudgeLimits& limits, std::vector<AssemblyKernel>& rows,
                 std::vector<std::string>* cubins, std::string* first_error = nullptr) {
  const std::pair<const std::optional<BuiltKernel>*, const std::string*> modules[] = {
      {&build.submission, &build.ptx}, {&build.second, &build.second_ptx}};
  for (std::size_t k = 0; k < std::size(modules); ++k) {
    const auto& [built, ptx] = modules[k];
    if (!built->has_value()) continue;
    AssemblyKernel row;
    row.whose = whose;
    row.entry = k == 0 ? stage.kernel : stage.second_kernel;
    const ResourceReport report = assemble_for_resources(*ptx, build.compile.arch, ptxas, limits);
    if (cubins) cubins->push_back(report.ok ? report.cubin : std::string());
    if (cubins && !report.ok && first_error && first_error->empty()) *first_error = report.error;
    if (!report.ok) {
      row.note = report.error;
    } else if (auto found = entry_of(report, (*built)->lowered_name)) {
      row.resources = found;
      std::string why;
      row.occupancy = theoretical_occupancy(build.compile.arch, stage.launch.threads_per_block, *found,
                                            stage.launch.dynamic_shared_bytes, &why);
      row.note = why;
    } else {
      row.note = "ptxas did not report the entry " + (*built)->lowered_name;
    }
    rows.push_back(std::move(row));
  }
}

// The learner's PTX, each line beside the source line it came from (0 where none).
std::vector<PtxLine> ptx_with_lines(const std::string& ptx, const std::string& file_name) {
  PtxLineTracker tracker(ptx_learner_file_index(ptx, file_name));
  std::vector<PtxLine> lines;
  std::size_t start = 0;
  while (start < ptx.size()) {
    const std::size_t end = std::min(ptx.find('\n', start), ptx.size());
    const std::string line = ptx.substr(start, end - start);
    start = end + 1;
    tracker.see(line);
    if (line.starts_with("\t.file")) {
      // `.file 1 "/srv/cudojo/submission.cu"`: the name alone, not the folder of whoever compiled it.
      const auto open = line.find('"'), close = line.rfind('"');
      if (open != std::string::npos && close > open) {
        const std::string path = line.substr(open + 1, close - open - 1);
        lines.push_back(
            {0, line.substr(0, open + 1) + fs::path(path).filename().string() + line.substr(close)});
        continue;
      }
    }
    // Blank lines, .loc directives, comments and the judge's own signature check are not the learner's.
    if (line.find_first_not_of(" \t") == std::string::npos || line.starts_with("\t.loc") ||
        line.starts_with("//") || line.find("cudojo_signature_check") != std::string::npos)
      continue;
    lines.push_back({tracker.current(), line});
  }
  return lines;
}

}  // namespace

AssemblyView view_assembly(const AssemblyRequest& request) {
  const Stage& stage = *request.stage;
  AssemblyView view;
  view.stage = stage.id;
  view.arch = request.arch;
  view.language = request.language;
  view.threads_per_block = stage.launch.threads_per_block;
  view.dynamic_shared_bytes = stage.launch.dynamic_shared_bytes;
  const std::string ptxas = find_cuda_tool("ptxas", env::kPtxas);
  if (ptxas.empty())
    throw std::runtime_error(
        "ptxas, the CUDA toolkit's assembler, was not found beside the toolkit's include folder or on PATH");

  BuildRequest build_request;
  build_request.stage = &stage;
  build_request.language = request.language;
  build_request.source = request.source;
  build_request.file_name = request.file_name;
  build_request.arch = request.arch;
  build_request.cuda_include_dir = default_cuda_include_dir();
  build_request.limits = request.limits;
  const SubmissionBuild yours = build_submission(build_request);
  view.compile = yours.compile;
  if (!yours.compile.ok) return view;

  BuildRequest reference_request = build_request;
  reference_request.language = Language::kCuda;
  reference_request.source = stage.reference_source;
  reference_request.file_name = "reference.cu";
  const SubmissionBuild reference = build_submission(reference_request);

  std::vector<std::string> cubins;
  std::string assembly_error;
  add_kernels("yours", yours, stage, ptxas, request.limits, view.kernels, &cubins, &assembly_error);
  if (reference.compile.ok)
    add_kernels("reference", reference, stage, ptxas, request.limits, view.kernels, nullptr);
  if (request.ptx) view.ptx = ptx_with_lines(yours.ptx, yours.file_name);
  if (request.sass) {
    const std::string nvdisasm = find_cuda_tool("nvdisasm", env::kNvdisasm);
    for (const std::string& cubin : cubins) {
      if (cubin.empty()) {
        view.sass_note = assembly_error;
        view.sass.clear();
        break;
      }
      const SassListing listing = disassemble(cubin, nvdisasm, yours.file_name, request.limits);
      if (!listing.ok) {
        view.sass_note = listing.error;
        view.sass.clear();
        break;
      }
      view.sass.insert(view.sass.end(), listing.functions.begin(), listing.functions.end());
    }
  }
  return view;
}

void to_json(nlohmann::json& j, const AssemblyView& view) {
  if (!view.compile.ok) {
    j = {{"stage", view.stage}, {"compile", {{"ok", false}, {"diagnostics", view.compile.diagnostics}}}};
    return;
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const AssemblyKernel& row : view.kernels) {
    nlohmann::json item = {{"whose", row.whose}, {"kernel", row.entry}, {"note", row.note}};
    item["resources"] = row.resources ? nlohmann::json(*row.resources) : nlohmann::json();
    item["occupancy"] = row.occupancy ? nlohmann::json(*row.occupancy) : nlohmann::json();
    kernels.push_back(item);
  }
  j = {{"stage", view.stage},
       {"language", to_string(view.language)},
       {"arch", view.arch},
       {"launch",
        {{"threads_per_block", view.threads_per_block}, {"dynamic_shared_bytes", view.dynamic_shared_bytes}}},
       {"kernels", kernels}};
  if (!view.ptx.empty()) {
    nlohmann::json lines = nlohmann::json::array();
    for (const PtxLine& line : view.ptx)
      lines.push_back(
          {{"line", line.line ? nlohmann::json(line.line) : nlohmann::json()}, {"text", line.text}});
    j["ptx"] = lines;
  }
  if (!view.sass.empty()) j["sass"] = view.sass;
  if (!view.sass_note.empty()) j["sass_note"] = view.sass_note;
}

}  // namespace cudojo

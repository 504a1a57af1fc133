#include "cli/asm_command.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/build_command.h"
#include "cli/cli_common.h"
#include "common/environment.h"
#include "compile/kernel_resources.h"
#include "compile/nvrtc_compiler.h"
#include "compile/ptx_lines.h"
#include "run/build.h"
#include "run/tools.h"

namespace cudojo::cli {

namespace {

// One kernel's row: whose, its entry, what ptxas reported, and the launch's occupancy.
struct Row {
  std::string whose;  // "yours" or "reference"
  std::string entry;  // the kernel's name as the stage gives it
  std::optional<KernelResources> resources;
  std::optional<Occupancy> occupancy;
  std::string note;  // why a figure is missing
};

// The entry `lowered` of a module's report, or its only entry.
std::optional<KernelResources> entry_of(const ResourceReport& report, const std::string& lowered) {
  for (const auto& kernel : report.kernels)
    if (kernel.kernel == lowered) return kernel;
  if (report.kernels.size() == 1) return report.kernels.front();
  return std::nullopt;
}

void add_rows(const std::string& whose, const SubmissionBuild& build, const Stage& stage,
              const std::string& ptxas, std::vector<Row>& rows) {
  const std::pair<const std::optional<BuiltKernel>*, const std::string*> kernels[] = {
      {&build.submission, &build.ptx}, {&build.second, &build.second_ptx}};
  for (std::size_t k = 0; k < std::size(kernels); ++k) {
    const auto& [built, ptx] = kernels[k];
    if (!built->has_value()) continue;
    Row row{whose, k == 0 ? stage.kernel : stage.second_kernel};
    const ResourceReport report = assemble_for_resources(*ptx, build.compile.arch, ptxas);
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

// The learner's PTX, each line beside the source line it came from (blank where none).
std::vector<std::pair<unsigned, std::string>> ptx_with_lines(const std::string& ptx,
                                                             const std::string& file_name) {
  PtxLineTracker tracker(ptx_learner_file_index(ptx, file_name));
  std::vector<std::pair<unsigned, std::string>> lines;
  std::size_t start = 0;
  while (start < ptx.size()) {
    const std::size_t end = std::min(ptx.find('\n', start), ptx.size());
    const std::string line = ptx.substr(start, end - start);
    start = end + 1;
    tracker.see(line);
    // Blank lines, .loc directives, comments and the judge's own signature check are not the learner's.
    if (line.find_first_not_of(" \t") == std::string::npos || line.starts_with("\t.loc") ||
        line.starts_with("//") || line.find("cudojo_signature_check") != std::string::npos)
      continue;
    lines.emplace_back(tracker.current(), line);
  }
  return lines;
}

std::string bytes(std::int64_t value) { return fmt::format("{} B", value); }

void print_text(const Stage& stage, const std::string& arch, const std::vector<Row>& rows) {
  std::cout << fmt::format(
      "{} on {}: {} threads a block, {} bytes of dynamic shared memory a block (ptxas -v)\n\n", stage.id,
      arch, stage.launch.threads_per_block, stage.launch.dynamic_shared_bytes);
  std::cout << fmt::format("{:<27} {:>9} {:>16} {:>8} {:>13} {:>8}  {}\n", "kernel", "registers",
                           "spilled (st/ld)", "stack", "static shared", "barriers", "occupancy");
  for (const Row& row : rows) {
    const std::string name = row.whose + ": " + row.entry;
    if (!row.resources) {
      std::cout << fmt::format("{:<27} {}\n", name, row.note);
      continue;
    }
    const KernelResources& r = *row.resources;
    const std::string occupancy =
        row.occupancy
            ? fmt::format("{:.0f}% ({} of {} warps; {} blocks an SM, limited by {})",
                          100 * row.occupancy->fraction, row.occupancy->active_warps,
                          row.occupancy->max_warps, row.occupancy->blocks_per_sm, row.occupancy->limited_by)
            : row.note;
    std::cout << fmt::format("{:<27} {:>9} {:>16} {:>8} {:>13} {:>8}  {}\n", name, r.registers,
                             fmt::format("{} / {}", bytes(r.spill_store_bytes), bytes(r.spill_load_bytes)),
                             bytes(r.stack_frame_bytes), bytes(r.shared_bytes), r.barriers, occupancy);
  }
}

}  // namespace

std::unique_ptr<AsmCommand> add_asm_command(CLI::App& app) {
  auto c = std::make_unique<AsmCommand>();
  c->command = app.add_subcommand(
      "asm",
      "Show what your kernel asks of the machine, beside the reference, without a GPU: registers, spills,\n"
      "stack, shared memory, barriers and the occupancy of the stage's launch, as ptxas reports them\n"
      "  cudojo asm reduction/3 mine.cu          the table\n"
      "  cudojo asm reduction/3 mine.py --ptx    and the PTX, each instruction beside its source line");
  c->command->add_option("stage", c->stage, "The stage, e.g. reduction/3")->required();
  c->command->add_option("file", c->file, "Your kernel's file (.cu, .py, .rs), or - for standard input")
      ->required();
  c->command->add_option("--lang", c->lang, "cuda, python or rust (default: from the file's extension)");
  c->command->add_option("--arch", c->arch, "The architecture to assemble for (default: sm_90)");
  c->command->add_flag("--ptx", c->ptx, "Also print your PTX, each instruction beside its source line");
  c->command->add_flag("--json", c->json, "Print JSON (the schema is in docs/verdicts.md)");
  return c;
}

int run_asm_command(const AsmCommand& command, const std::vector<Stage>& course) {
  const Stage& stage = require_stage(course, command.stage);
  if (command.file != "-") require_file(command.file);
  const Language language = language_of(command.file, command.lang);
  const std::string arch = command.arch.empty() ? "sm_90" : require_arch(command.arch);
  const SubmissionFile submission = read_submission(command.file, language, kDefaultLimits.max_source_bytes);
  const std::string ptxas = find_cuda_tool("ptxas", env::kPtxas);
  if (ptxas.empty())
    return fail(
        command.json, "no_ptxas",
        "ptxas, the CUDA toolkit's assembler, was not found beside the toolkit's include folder or on "
        "PATH; `cudojo asm` needs it");

  BuildRequest request;
  request.stage = &stage;
  request.language = language;
  request.source = submission.source;
  request.file_name = submission.file_name;
  request.arch = arch;
  request.cuda_include_dir = default_cuda_include_dir();
  SubmissionBuild yours = build_submission(request);
  state_real_size(yours.compile, submission, request.limits);
  if (!yours.compile.ok) {
    if (command.json) {
      std::cout << nlohmann::json({{"stage", stage.id},
                                   {"compile", {{"ok", false}, {"diagnostics", yours.compile.diagnostics}}}})
                       .dump(2)
                << "\n";
    } else {
      print_diagnostics(yours.compile);
      std::cout << fmt::format("{} did not compile\n", submission.file_name);
    }
    return 1;
  }
  BuildRequest reference_request = request;
  reference_request.language = Language::kCuda;
  reference_request.source = stage.reference_source;
  reference_request.file_name = "reference.cu";
  const SubmissionBuild reference = build_submission(reference_request);

  std::vector<Row> rows;
  add_rows("yours", yours, stage, ptxas, rows);
  if (reference.compile.ok) add_rows("reference", reference, stage, ptxas, rows);

  if (command.json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const Row& row : rows) {
      nlohmann::json item = {{"whose", row.whose}, {"kernel", row.entry}, {"note", row.note}};
      item["resources"] = row.resources ? nlohmann::json(*row.resources) : nlohmann::json();
      item["occupancy"] = row.occupancy ? nlohmann::json(*row.occupancy) : nlohmann::json();
      kernels.push_back(item);
    }
    nlohmann::json out = {{"stage", stage.id},
                          {"language", to_string(language)},
                          {"arch", arch},
                          {"launch",
                           {{"threads_per_block", stage.launch.threads_per_block},
                            {"dynamic_shared_bytes", stage.launch.dynamic_shared_bytes}}},
                          {"kernels", kernels}};
    if (command.ptx) {
      nlohmann::json lines = nlohmann::json::array();
      for (const auto& [line, text] : ptx_with_lines(yours.ptx, submission.file_name))
        lines.push_back({{"line", line ? nlohmann::json(line) : nlohmann::json()}, {"text", text}});
      out["ptx"] = lines;
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  print_text(stage, arch, rows);
  if (command.ptx) {
    std::cout << fmt::format("\nYour PTX ({}), each instruction beside the line of {} it came from:\n",
                             yours.submission->lowered_name, submission.file_name);
    for (const auto& [line, text] : ptx_with_lines(yours.ptx, submission.file_name))
      std::cout << (line ? fmt::format("{:>5} | ", line) : std::string("      | ")) << text << "\n";
  }
  return 0;
}

}  // namespace cudojo::cli

#include "cli/asm_command.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/build_command.h"
#include "cli/cli_common.h"
#include "run/assembly.h"

namespace cudojo::cli {

namespace {

std::string bytes(std::int64_t value) { return fmt::format("{} B", value); }

void print_table(const AssemblyView& view) {
  std::cout << fmt::format(
      "{} on {}: {} threads a block, {} bytes of dynamic shared memory a block (ptxas -v)\n\n", view.stage,
      view.arch, view.threads_per_block, view.dynamic_shared_bytes);
  std::cout << fmt::format("{:<27} {:>9} {:>16} {:>8} {:>13} {:>8}  {}\n", "kernel", "registers",
                           "spilled (st/ld)", "stack", "static shared", "barriers", "occupancy");
  for (const AssemblyKernel& row : view.kernels) {
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

std::string line_column(unsigned line) {
  return line ? fmt::format("{:>5} | ", line) : std::string("      | ");
}

void print_listings(const AssemblyView& view, const std::string& file_name) {
  if (!view.ptx.empty()) {
    std::cout << fmt::format("\nYour PTX, each instruction beside the line of {} it came from:\n", file_name);
    for (const PtxLine& line : view.ptx) std::cout << line_column(line.line) << line.text << "\n";
  }
  if (!view.sass_note.empty()) std::cout << "\nNo SASS: " << view.sass_note << "\n";
  for (const SassFunction& function : view.sass) {
    std::cout << fmt::format(
        "\nYour SASS ({} for {}), each instruction beside the line of {} it came from:\n", function.entry,
        view.arch, file_name);
    for (const SassLine& line : function.lines)
      std::cout << line_column(line.line)
                << (line.offset ? fmt::format("/*{:04x}*/ {}", *line.offset, line.text) : line.text) << "\n";
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
      "  cudojo asm reduction/3 mine.py --ptx    and the PTX, each instruction beside its source line\n"
      "  cudojo asm reduction/3 mine.cu --sass   and the SASS (needs nvdisasm, which a GPU machine's toolkit "
      "has)");
  c->command->add_option("stage", c->stage, "The stage, e.g. reduction/3")->required();
  c->command->add_option("file", c->file, "Your kernel's file (.cu, .py, .rs), or - for standard input")
      ->required();
  c->command->add_option("--lang", c->lang, "cuda, python or rust (default: from the file's extension)");
  c->command->add_option("--arch", c->arch, "The architecture to assemble for (default: sm_90)");
  c->command->add_flag("--ptx", c->ptx, "Also print your PTX, each instruction beside its source line");
  c->command->add_flag(
      "--sass", c->sass,
      "Also print your SASS, the machine code ptxas makes, each instruction beside its source "
      "line (CUDOJO_NVDISASM names the disassembler)");
  c->command->add_flag("--json", c->json, "Print JSON (the schema is in docs/verdicts.md)");
  return c;
}

int run_asm_command(const AsmCommand& command, const std::vector<Stage>& course) {
  const Stage& stage = require_stage(course, command.stage);
  if (command.file != "-") require_file(command.file);
  const Language language = language_of(command.file, command.lang);
  const std::string arch = command.arch.empty() ? "sm_90" : require_arch(command.arch);
  const SubmissionFile submission = read_submission(command.file, language, kDefaultLimits.max_source_bytes);

  AssemblyRequest request;
  request.stage = &stage;
  request.language = language;
  request.source = submission.source;
  request.file_name = submission.file_name;
  request.arch = arch;
  request.ptx = command.ptx;
  request.sass = command.sass;
  AssemblyView view;
  try {
    view = view_assembly(request);
  } catch (const std::runtime_error& error) {
    const std::string why = error.what();
    return fail(command.json, why.starts_with("ptxas") ? "no_ptxas" : "internal",
                why + (why.starts_with("ptxas") ? "; `cudojo asm` needs it" : ""));
  }
  state_real_size(view.compile, submission, request.limits);
  if (command.json) {
    std::cout << nlohmann::json(view).dump(2) << "\n";
    return view.compile.ok ? 0 : 1;
  }
  if (!view.compile.ok) {
    print_diagnostics(view.compile);
    std::cout << fmt::format("{} did not compile\n", submission.file_name);
    return 1;
  }
  print_table(view);
  print_listings(view, submission.file_name);
  return 0;
}

}  // namespace cudojo::cli

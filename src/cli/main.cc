// cudojo: practice and judge CUDA kernels. This file only parses the command line, calls the
// library and chooses the exit code; everything else lives in the folders of the data flow.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/asm_command.h"
#include "cli/build_command.h"
#include "cli/class_commands.h"
#include "cli/cli_common.h"
#include "cli/client_commands.h"
#include "cli/command_line.h"
#include "cli/completion.h"
#include "cli/course_commands.h"
#include "cli/gpu_commands.h"
#include "cli/rejudge_commands.h"
#include "cli/serve_command.h"
#include "cli/show_command.h"
#include "common/environment.h"
#include "common/json_text.h"
#include "compile/frontend.h"
#include "compile/include_policy.h"
#include "compile/nvrtc_compiler.h"
#include "compile/sandbox.h"
#include "gate/calibration.h"
#include "gpu/gpu.h"
#include "lab/lab.h"
#include "run/build.h"
#include "run/compile_child.h"
#include "run/judge.h"
#include "run/protocol.h"
#include "serve/markdown.h"
#include "serve/server.h"
#include "stage/contract_info.h"
#include "stage/language.h"
#include "stage/stage.h"
#include "stage/stage_json.h"

namespace {

using namespace cudojo;
using namespace cudojo::cli;

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw UsageError(fmt::format("--seed {}: give a whole number from 0 to 18446744073709551615", text));
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "worker")
    return cudojo::worker_main(argc >= 3 ? argv[2] : "check");
  if (argc >= 2 && std::string(argv[1]) == "gpus") return count_visible_gpus();
  if (argc >= 2 && std::string(argv[1]) == "nvrtc-compile") return cudojo::compile_child_main();

  CLI::App app{
      "cudojo: learn and prove CUDA kernel skills. Take a stage, edit its kernel, and check it on the GPU:\n"
      "  cudojo stages                          list the track\n"
      "  cudojo show reduction/3                lesson, kernel signature, launch, checks, gate\n"
      "  cudojo starter reduction/3 > mine.cu   the starter kernel (--lang python or rust for the others)\n"
      "  cudojo check reduction/3 mine.cu       compile, run, check, time, gate, explain (.cu, .py, .rs)\n"
      "  cudojo build reduction/3 mine.py       compile only, for `cudojo check --build` on a GPU machine\n"
      "  cudojo submit reduction/3 mine.cu      judge it on your class's server (after `cudojo login URL`)\n"
      "Exit codes: 0 accepted, 1 any other verdict on your kernel, 2 usage error, no GPU, or judge failure; "
      "3 the class server refused, could not be reached or stopped answering; 130 Ctrl-C."};
  app.name("cudojo");  // the usage line says `cudojo`, not the path it was started by
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", "cudojo " CUDOJO_VERSION, "Print cudojo's version and exit");
  std::string course_dir = default_course_root().string();
  app.add_option("--course", course_dir, "Course folder (default: $CUDOJO_COURSE or the bundled course)");

  bool json = false;
  auto* stages = app.add_subcommand("stages", "List the stages of the track, one line each");
  stages->add_flag("--json", json, "Print JSON instead of text");

  std::string stage_id;
  auto* show = app.add_subcommand("show", "Show a stage: lesson, kernel signature, launch, checks and gate");
  show->add_option("stage", stage_id, "Stage id (reduction/3) or alias (reduction/block-tree)")->required();
  show->add_flag("--json", json, "Print JSON instead of text");

  std::string lang_option;
  const std::string lang_help =
      "Language: cuda (CUDA C++, the default; also c++, cpp, cu), python (Numba; also py, numba) or rust "
      "(nvptx64; also rs)";
  show->add_option("--lang", lang_option, lang_help);

  auto* starter =
      app.add_subcommand("starter", "Print the stage's starter kernel, a complete file in the language");
  starter->add_option("stage", stage_id, "Stage id or alias")->required();
  starter->add_option("--lang", lang_option, lang_help);

  std::string file;
  std::string arch;
  std::string colour = "auto";
  auto* check = app.add_subcommand(
      "check",
      "Judge a kernel: compile it (NVRTC for .cu; Numba for .py and rustc for .rs, in a sandbox), run it in "
      "a "
      "separate worker process on the GPU under the stage's driver, check against adversarial tests, time "
      "against the reference, apply the gate, explain.");
  check->add_option("stage", stage_id, "Stage id or alias")->required();
  std::string build_file;
  auto* file_option = check->add_option(
      "file", file, "Your kernel: a .cu, .py or .rs file, or - for standard input (with --lang)");
  auto* build_option = check->add_option(
      "--build", build_file, "Run a build made by `cudojo build` instead of compiling a file here");
  file_option->excludes(build_option);
  check->add_option("--lang", lang_option, lang_help + " (default: from the file's extension)");
  check->add_flag("--json", json, "Print one JSON object (the report) instead of the table");
  check->add_option(
      "--arch", arch,
      "Compile for this architecture, one this NVRTC knows (default: the GPU's own, sm_90 without "
      "one)");
  std::string seed_text;
  auto* seed_option =
      check->add_option("--seed", seed_text,
                        "Seed for the random test data, 0 to 18446744073709551615 (default: fresh each run)");
  bool no_sanitize = false;
  check->add_flag(
      "--no-sanitize", no_sanitize,
      "Skip the compute-sanitizer pass (racecheck, synccheck, memcheck): faster, but a missing or "
      "divergent barrier can then pass by luck");
  bool no_profile = false;
  check->add_flag(
      "--no-profile", no_profile,
      "Skip the profiler metrics (SM and DRAM throughput, global atomics) and gate on time alone");
  bool all_metrics = false;
  auto* all_metrics_flag = check->add_flag(
      "--all-metrics", all_metrics,
      "Measure SM throughput on every stage, not only where the gate reads it (reduction/3 and /4 "
      "today): it takes most of the profiler's replay passes (9 of 10 on an H200), each with the GPU "
      "alone");
  all_metrics_flag->excludes(check->get_option("--no-profile"));
  bool hot_spots = false;
  check->add_flag(
      "--hot-spots", hot_spots,
      "For a kernel that passes the tests: where its time goes, line by line of your source, with "
      "each line's main stall reason (Nsight Compute's warp samples of one launch at the timed "
      "size; a few seconds more)");
  std::string ncu_report;
  check->add_option("--ncu-report", ncu_report,
                    "Also keep the whole Nsight Compute report of that launch in FILE (.ncu-rep; every "
                    "section, your source imported; opens in Nsight Compute). Implies --hot-spots");
  check
      ->add_option("--color", colour,
                   "Colour in the text report: auto (default; honours NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  std::string build_output;
  auto* build = app.add_subcommand(
      "build",
      "Compile a kernel for one architecture without running it (no GPU needed) and write everything a GPU "
      "machine needs to judge it: then `cudojo check STAGE --build FILE` there. Python and Rust are compiled "
      "to PTX, so the GPU machine needs neither Numba nor rustc.");
  build->add_option("stage", stage_id, "Stage id or alias")->required();
  build
      ->add_option("file", file, "Your kernel: a .cu, .py or .rs file, or - for standard input (with --lang)")
      ->required();
  build->add_option("-o,--output", build_output,
                    "The build file to write (default: FILE with .build; stdin.build for -); "
                    "nothing is written when the kernel does not compile");
  build->add_option("--lang", lang_option, lang_help + " (default: from the file's extension)");
  build->add_option("--arch", arch, "Architecture to build for, one this NVRTC knows (default: sm_90)");
  build->add_flag("--json", json, "Print a JSON summary instead of text");

  auto* toolchains = app.add_subcommand(
      "toolchains",
      "Say which languages this machine can compile (CUDA C++ always; Python needs python3-numba, Rust needs "
      "rustc-web and rust-web-src, both need bubblewrap) and prepare Rust's core for nvptx64 once");
  toolchains->add_option("--arch", arch, "Architecture to prepare for (default: sm_90)");
  toolchains->add_flag("--json", json, "Print JSON");

  auto serve = add_serve_command(app);
  auto client_commands = add_client_commands(app);
  auto class_commands = add_class_commands(app);
  auto rejudge_commands = add_rejudge_commands(app);
  auto course_commands = add_course_commands(app, course_dir, json);
  auto completion_commands = add_completion_commands(app);
  auto asm_command = add_asm_command(app);
  list_commands_in_one_line(app);

  std::string lab_what = "list";
  bool lab_csv = false;
  std::string lab_plot;
  auto* lab_command = app.add_subcommand(
      "lab",
      "Rerun the course's experiments on this GPU, beside CUB, checking every answer before timing it:\n"
      "  cudojo lab list | cudojo lab sum-strategies --plot sums.svg | cudojo lab all --json");
  lab_command->add_option("experiment", lab_what, "An experiment name, 'all', or 'list'")
      ->capture_default_str();
  lab_command->add_flag("--json", json, "Print JSON");
  lab_command->add_flag("--csv", lab_csv, "Print CSV (one row per table row)");
  lab_command->add_option("--plot", lab_plot, "Write the sum sweep as an SVG chart to this file");

  std::filesystem::path calibration_dir;
  app.add_option(
      "--calibration", calibration_dir,
      "Folder of per-GPU reference figures (default: $CUDOJO_CALIBRATION or calibration/ beside the course)");
  auto* calibrate = app.add_subcommand("calibrate",
                                       "Measure every stage's reference on this GPU (time, bandwidth, "
                                       "profiler metrics) and store the figures as "
                                       "<calibration>/<gpu>.json; check then gates against them, and shows "
                                       "the previous stage's beside yours.");

  {
    // Set last: a subcommand copies its parent's footer when made, and theirs do not repeat it.
    std::string footer = "Environment:";
    for (const auto& variable : cudojo::environment_variables()) {
      footer += fmt::format("\n  {:<28} {}", variable.name, variable.meaning);
    }
    app.footer(footer);
  }

  std::vector<std::string> words = command_line_words(argc, argv);
  if (auto refused = refuse_unknown_command(app, words, {"--course", "--calibration"})) return *refused;
  try {
    std::vector<const char*> word_pointers;
    for (const auto& word : words) word_pointers.push_back(word.c_str());
    app.parse(static_cast<int>(word_pointers.size()), word_pointers.data());
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    if (code == 0) return 0;
    // Under --json a program reads stdout: it gets the usage error as JSON too.
    if (std::find(words.begin(), words.end(), "--json") != words.end())
      std::cout
          << nlohmann::json({{"error", error.what()}, {"kind", "usage"}, {"exit_code", kExitUsage}}).dump(2)
          << "\n";
    return kExitUsage;
  }

  try {
    if (const auto code = run_completion_command(*completion_commands, app, course_dir)) return *code;
    if (*lab_command) return cmd_lab(lab_what, json, lab_csv, lab_plot);
    if (*toolchains) return cmd_toolchains(arch, json);
    // The class server's client needs no course here: the server has it.
    if (const auto code = run_client_command(*client_commands)) return *code;
    if (wants_course_command(*course_commands)) return run_course_command(*course_commands, course_dir, json);
    const Course loaded = load_course_report(course_dir);  // a broken stage is set aside, the rest load
    const auto& course = loaded.stages;
    if (calibration_dir.empty()) calibration_dir = default_calibration_dir(course_dir);
    if (*calibrate) return cmd_calibrate(course, calibration_dir);
    if (*stages) return cmd_stages(loaded, json);
    if (*serve->command) return run_serve_command(*serve, course, course_dir, calibration_dir);
    if (wants_class_command(*class_commands)) {
      json = class_commands->json;
      return run_class_command(*class_commands, course);
    }
    if (rejudge_asked(*rejudge_commands)) {
      json = rejudge_commands->json;
      return run_rejudge_command(*rejudge_commands, course, course_dir, calibration_dir);
    }
    if (*asm_command->command) return run_asm_command(*asm_command, course);
    const Stage& stage = require_stage(loaded, stage_id);
    if (*show)
      return cmd_show(stage, lang_option.empty() ? Language::kCuda : require_language(lang_option),
                      course_dir, json);
    if (*starter) {
      const Language language = lang_option.empty() ? Language::kCuda : require_language(lang_option);
      const std::string* text = stage.starter(language);
      if (!text) throw UsageError(fmt::format("{} has no {} starter", stage.id, display_name(language)));
      std::cout << *text;
      return 0;
    }
    if (*build) {
      if (file != "-") require_file(file);  // a missing file is told before its language
      const Language language = language_of(file, lang_option);
      if (!arch.empty()) require_arch(arch);  // before reading or compiling anything
      const SubmissionFile submission = read_submission(file, language, kDefaultLimits.max_source_bytes);
      if (build_output.empty())
        build_output =
            file == "-" ? "stdin.build" : std::filesystem::path(file).replace_extension(".build").string();
      return cmd_build(stage, submission, language, arch, build_output, json);
    }

    CheckRequest request;
    request.stage = &stage;
    SubmissionFile submission;                             // stays empty for --build
    if (!arch.empty()) request.arch = require_arch(arch);  // before reading or compiling anything
    if (!build_file.empty()) {
      SubmissionBuild prebuilt = read_build_file(build_file);
      if (prebuilt.stage != stage.id) {
        throw UsageError(fmt::format("{} was built for {}, not {}", build_file, prebuilt.stage, stage.id));
      }
      request.language = prebuilt.language;
      request.source = prebuilt.source;
      request.file_name = prebuilt.file_name;
      request.build = std::move(prebuilt);
    } else {
      if (file.empty())
        throw UsageError("check needs your kernel's file (or --build FILE from `cudojo build`)");
      if (file != "-") require_file(file);
      request.language = language_of(file, lang_option);
      submission = read_submission(file, request.language, request.workers.limits.max_source_bytes);
      request.source = submission.source;
      request.file_name = submission.file_name;
    }
    if (*seed_option) request.seed = parse_seed(seed_text);
    request.workers.sanitize = !no_sanitize;
    request.profile = !no_profile;
    request.all_metrics = all_metrics;
    request.hot_spots = hot_spots || !ncu_report.empty();
    request.ncu_report_path = ncu_report;
    CheckRequest::NcuReportOutcome kept_report;
    if (!ncu_report.empty()) request.ncu_report = &kept_report;
    request.calibration_dir = calibration_dir.string();
    request.workers.worker_executable = self_executable();
    request.cuda_include_dir = default_cuda_include_dir();
    Report report = run_check(request);
    state_real_size(report.compile, submission, request.workers.limits);
    if (report.verdict == Verdict::kNoDevice) {
      const std::string lang = lang_option.empty() ? "" : " --lang " + lang_option;
      report.message +=
          build_file.empty()
              ? fmt::format(
                    ". To judge it elsewhere: `cudojo submit {} {}{}` to your class's server (after "
                    "`cudojo login URL`), or `cudojo build {} {}{} -o kernel.build` here, then "
                    "`cudojo check {} --build kernel.build` on a GPU machine",
                    stage.id, file, lang, stage.id, file, lang, stage.id)
              : fmt::format(". Run `cudojo check {} --build {}` on a GPU machine", stage.id, build_file);
    }
    if (kept_report.kept && report.hot_spots)
      report.hot_spots->note +=
          fmt::format("{}the whole Nsight Compute report is in {} ({} bytes; ncu --import {})",
                      report.hot_spots->note.empty() ? "" : "; ", ncu_report, kept_report.bytes, ncu_report);
    if (!ncu_report.empty() && !kept_report.kept) {
      // The verdict stands; the report's absence is said where the hot spots are.
      if (!report.hot_spots) report.hot_spots = HotSpots{};
      const std::string why = kept_report.note.empty() ? "none was made" : kept_report.note;
      report.hot_spots->note +=
          (report.hot_spots->note.empty() ? "" : "; ") + ("no Nsight Compute report: " + why);
    }
    if (json) {
      std::cout << json_text(nlohmann::json(report), 2) << "\n";
    } else {
      const bool use_colour = colour == "always" || (colour == "auto" && colour_wanted(1));
      std::cout << render_text(report, use_colour);
    }
    return exit_code(report.verdict);
  } catch (const UsageError& error) {
    return fail(json, "usage_error", error.what());
  } catch (const StageError& error) {
    return fail(json, "course_error", std::string("course data problem: ") + error.what());
  } catch (const std::exception& error) {
    return fail(json, "internal_error", std::string("internal error: ") + error.what());
  }
}

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
#include "serve/server.h"
#include "stage/contract_info.h"
#include "stage/language.h"
#include "stage/stage.h"
#include "stage/stage_json.h"

namespace {

using namespace cudojo;

constexpr int kExitUsage = 2;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const Stage& require_stage(const std::vector<Stage>& course, const std::string& id) {
  if (const Stage* stage = find_stage(course, id)) return *stage;
  std::string known;
  for (const auto& s : course) known += fmt::format("\n  {:<14} {}", s.id, s.slug_id());
  throw UsageError(fmt::format("no stage '{}'. Stages:{}", id, known));
}

// Ends a command that could not do its work: the reason on stderr and, under --json, one JSON
// object on stdout as well, so a program reading stdout always gets JSON.
int fail(bool json, std::string_view kind, const std::string& message) {
  std::cerr << "cudojo: " << message << "\n";
  if (json)
    std::cout << json_text({{"error", message}, {"kind", kind}, {"exit_code", kExitUsage}}, 2) << "\n";
  return kExitUsage;
}

// An architecture NVRTC can compile for: sm_NN (or sm_NNa), CUDA 13 supporting sm_75 and newer.
std::string require_arch(const std::string& arch) {
  static const std::regex kArch(R"(sm_(\d{2,3})[af]?)");
  std::smatch match;
  if (!std::regex_match(arch, match, kArch) || std::stoi(match[1]) < 75) {
    throw UsageError(
        fmt::format("--arch {}: give an architecture CUDA 13 compiles for, sm_75 or newer "
                    "(an H100 or H200 is sm_90)",
                    arch));
  }
  return arch;
}

std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw UsageError(fmt::format("--seed {}: give a whole number from 0 to 18446744073709551615", text));
  }
  return value;
}

int cmd_stages(const std::vector<Stage>& course, bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& stage : course) list.push_back(stage_facts_json(stage));
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  for (const auto& stage : course) {
    std::cout << fmt::format("{:<13} {:<26} {}\n", stage.id, stage.slug_id(), stage.title);
    std::cout << fmt::format("{:<13} {}\n", "", stage.summary);
  }
  return 0;
}

Language require_language(const std::string& word) {
  if (auto language = parse_language(word)) return *language;
  throw UsageError(fmt::format("no language '{}'; the course's languages are {}", word, language_list()));
}

// The language of a submission: --lang when given, else the file's extension.
Language language_of(const std::string& path, const std::string& lang_option) {
  if (!lang_option.empty()) return require_language(lang_option);
  if (auto language = language_from_path(path)) return *language;
  throw UsageError(fmt::format(
      "cannot tell the language of '{}' from its name: use .cu (CUDA C++), .py (Python with Numba) or .rs "
      "(Rust), or pass --lang {{{}}}",
      path, language_list()));
}

// course/languages/<language>.md: how kernels look in that language, the names it offers, and what
// the judge refuses.
std::string language_notes(const std::filesystem::path& course_dir, Language language) {
  std::ifstream in(course_dir / "languages" / (std::string(to_string(language)) + ".md"));
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int cmd_show(const Stage& stage, Language language, const std::filesystem::path& course_dir, bool json) {
  if (json) {
    // The same object the server's /api/stages/ID gives; --lang picks the signature and starter.
    nlohmann::json description = stage_description_json(stage);
    description["signature"] = describe_signature(stage, language);
    if (const std::string* starter = stage.starter(language)) description["starter"] = *starter;
    std::cout << json_text(description, 2) << "\n";
    return 0;
  }
  const std::string extension(source_extension(language));
  std::cout << fmt::format("{}  ({})  {}\n\n", stage.id, stage.slug_id(), stage.title);
  std::cout << stage.lesson_markdown << "\n";
  std::cout << fmt::format("## The kernel you write ({})\n\n    {}\n\n", display_name(language),
                           describe_signature(stage, language));
  std::cout << "## Launch\n\n    " << describe_launch(stage) << "\n\n";
  std::cout << "## What the driver checks\n\n" << find_contract_info(stage.contract)->driver << "\n";
  std::cout << "\n" << describe_tests(stage) << "\n";
  std::cout << "\n## Gate\n\n    " << describe_gate(stage) << "\n\n";
  if (language == Language::kCuda)
    std::cout << "## Headers you may include\n\n" << allowed_headers_text() << "\n";
  if (language != Language::kCuda) {
    const std::string notes = language_notes(course_dir, language);
    if (!notes.empty()) std::cout << notes << "\n";
  }
  const std::string lang_flag =
      language == Language::kCuda ? "" : fmt::format(" --lang {}", to_string(language));
  std::cout << fmt::format("Start with:  cudojo starter {}{} > mine{} && cudojo check {} mine{}\n", stage.id,
                           lang_flag, extension, stage.id, extension);
  std::cout << "Other languages: --lang cuda | python | rust\n";
  return 0;
}

SubmissionBuild read_build_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read the build file '{}'", path));
  nlohmann::json parsed = nlohmann::json::parse(in, nullptr, false);
  if (parsed.is_discarded())
    throw UsageError(fmt::format("'{}' is not JSON, so not a cudojo build file", path));
  try {
    return parsed.get<SubmissionBuild>();
  } catch (const std::exception& error) {
    throw UsageError(fmt::format("{}: {}", path, error.what()));
  }
}

void require_file(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw UsageError(fmt::format("'{}' is a folder; give the file that holds your kernel", path));
  }
}

std::string read_submission(const std::string& path, std::size_t limit) {
  require_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read '{}'", path));
  std::ostringstream text;
  // Read one byte past the limit so the judge can say by how much, without reading a huge file.
  std::vector<char> buffer(limit + 1);
  in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  return std::string(buffer.data(), static_cast<std::size_t>(in.gcount()));
}

int cmd_build(const Stage& stage, const std::string& file, Language language, const std::string& arch,
              const std::string& output, bool json) {
  BuildRequest request;
  request.stage = &stage;
  request.language = language;
  request.source = read_submission(file, request.limits.max_source_bytes);
  request.file_name = sanitize_file_name(file);
  request.arch = arch.empty() ? "sm_90" : require_arch(arch);
  request.cuda_include_dir = default_cuda_include_dir();
  const SubmissionBuild build = build_submission(request);
  const nlohmann::json written = build;
  {
    std::ofstream out(output, std::ios::binary);
    out << json_text(written) << "\n";
    if (!out) throw UsageError(fmt::format("cannot write '{}'", output));
  }
  if (json) {
    nlohmann::json summary = {{"output", output},
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
    for (const auto& diagnostic : build.compile.diagnostics) {
      std::cout << fmt::format("{}:{}:{}: {}: {}\n", diagnostic.file, diagnostic.line, diagnostic.column,
                               diagnostic.severity, diagnostic.message);
    }
    std::cout << fmt::format(
        "built {} ({}) for {} {}: {} {} bytes, entry {}, barrier-check build {}; {:.0f} ms\n"
        "run it on a GPU machine with:  cudojo check {} --build {}\n",
        build.file_name, display_name(language), stage.id, request.arch, to_string(build.submission->format),
        build.submission->image.size(), build.submission->lowered_name,
        build.counted ? "made" : "not made: " + build.counted_note, build.compile.compile_ms, stage.id,
        output);
  } else {
    std::cout << build.compile.log << (build.compile.log.ends_with("\n") ? "" : "\n");
    std::cout << fmt::format(
        "{} did not compile; {} still records that, and `cudojo check --build` reports it\n", build.file_name,
        output);
  }
  return build.compile.ok ? 0 : 1;
}

// What each language needs on this machine, and the one-time preparation (Rust's core for nvptx64,
// 20-30 s) so that the first Rust check does not pay for it.
int cmd_toolchains(const std::string& arch, bool json) {
  nlohmann::json status = nlohmann::json::object();
  status["cuda"] = {{"ok", true}, {"compiler", "NVRTC " + nvrtc_version()}};
  const bool sandbox = !find_bubblewrap().empty();
  const bool python = std::filesystem::exists("/usr/bin/python3") &&
                      std::filesystem::exists("/usr/lib/python3/dist-packages/numba");
  status["python"] = {{"ok", sandbox && python},
                      {"compiler", python ? "Debian's python3-numba" : "missing: apt install python3-numba"}};
  std::string error;
  const auto sysroot = sandbox ? prepare_rust_sysroot(arch.empty() ? "sm_90" : arch, error) : std::nullopt;
  status["rust"] = {{"ok", sysroot.has_value()},
                    {"compiler", sysroot ? "Debian's rustc, core for nvptx64 in " + *sysroot : error}};
  status["sandbox"] = {{"ok", sandbox},
                       {"bubblewrap", sandbox ? find_bubblewrap() : "missing: apt install bubblewrap"}};
  if (json) {
    std::cout << status.dump(2) << "\n";
  } else {
    for (const auto& [name, entry] : status.items()) {
      std::cout << fmt::format("{:<8} {:<8} {}\n", name, entry["ok"].get<bool>() ? "ok" : "MISSING",
                               entry.contains("compiler") ? entry["compiler"] : entry["bubblewrap"]);
    }
  }
  bool all = true;
  for (const auto& [name, entry] : status.items()) all = all && entry["ok"].get<bool>();
  return all ? 0 : 1;
}

int cmd_lab(const std::string& what, bool json, bool csv, const std::string& plot_file) {
  if (what == "list") {
    for (const auto& experiment : lab::experiments()) {
      std::cout << fmt::format("{:<16} {}\n", experiment.name, experiment.description);
    }
    return 0;
  }
  std::vector<const lab::Experiment*> chosen;
  if (what == "all") {
    for (const auto& experiment : lab::experiments()) chosen.push_back(&experiment);
  } else if (const auto* experiment = lab::find_experiment(what)) {
    chosen.push_back(experiment);
  } else {
    throw UsageError(fmt::format("no experiment '{}'; `cudojo lab list` shows them", what));
  }
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::cerr << fmt::format("cudojo lab: no usable CUDA device ({}); the experiments run kernels on a GPU\n",
                             status == cudaSuccess ? "cudaErrorNoDevice" : cudaGetErrorName(status));
    return 2;
  }
  GpuSession gpu(0, default_cuda_include_dir());
  std::cerr << fmt::format("cudojo lab: {} ({}), measuring peak read bandwidth...\n", gpu.info().name,
                           gpu.info().arch);
  gpu.measure_peak_read_gbps();
  lab::Context context{gpu, [](const std::string& line) { std::cerr << "  " << line << "\n"; }};
  std::vector<lab::Result> results;
  for (const auto* experiment : chosen) {
    std::cerr << "cudojo lab: " << experiment->name << "\n";
    results.push_back(experiment->run(context));
  }
  if (json) {
    nlohmann::json out = {{"gpu", gpu.info()}, {"results", results}};
    std::cout << out.dump(2) << "\n";
  } else if (csv) {
    std::cout << lab::render_csv(results);
  } else {
    std::cout << fmt::format("GPU: {} ({}, {} SMs), measured peak read {:.0f} GB/s\n\n", gpu.info().name,
                             gpu.info().arch, gpu.info().sm_count, gpu.info().peak_read_gbps);
    for (const auto& result : results) std::cout << lab::render_text(result) << "\n";
  }
  if (!plot_file.empty()) {
    const auto with_plot =
        std::find_if(results.begin(), results.end(), [](const lab::Result& r) { return r.plot.has_value(); });
    if (with_plot == results.end()) {
      std::cerr << "cudojo lab: none of these experiments draws a plot (sum-strategies does)\n";
    } else {
      std::ofstream(plot_file) << lab::render_svg(*with_plot->plot);
      std::cerr << "cudojo lab: wrote " << plot_file << "\n";
    }
  }
  const int code = lab::exit_code(results);
  if (code != 0)
    std::cerr << "cudojo lab: some correctness checks FAILED; the timings above are not to be trusted\n";
  return code;
}

int cmd_calibrate(const std::vector<Stage>& course, const std::filesystem::path& dir) {
  Calibration calibration;
  for (const auto& stage : course) {
    std::cerr << "cudojo calibrate: " << stage.id << "\n";
    CheckRequest request;
    request.stage = &stage;
    request.source = stage.reference_source;
    request.file_name = "reference.cu";
    request.workers.sanitize = false;
    request.workers.worker_executable = self_executable();
    request.cuda_include_dir = default_cuda_include_dir();
    const Report report = run_check(request);
    if (report.verdict == Verdict::kNoDevice) {
      std::cerr << "cudojo calibrate: " << report.message << "\n";
      return 2;
    }
    if (report.verdict != Verdict::kAccepted || !report.gpu || !report.metrics.reference_time_ms) {
      std::cerr << fmt::format(
          "cudojo calibrate: the reference of {} was not accepted ({}: {}); nothing written\n", stage.id,
          to_string(report.verdict), report.message);
      return 1;
    }
    if (calibration.gpu.empty()) {
      calibration.gpu = report.gpu->name;
      calibration.arch = report.gpu->arch;
      calibration.driver = report.gpu->driver;
      calibration.peak_read_gbps = report.gpu->peak_read_gbps;
    }
    StageCalibration entry;
    entry.n = report.metrics.n;
    entry.reference_time_ms = *report.metrics.reference_time_ms;
    if (report.metrics.bandwidth_gbps && report.metrics.time_ms) {
      // Bytes are the stage's input, so the reference's bandwidth follows from its own median.
      const double bytes = *report.metrics.bandwidth_gbps * 1e9 * report.metrics.time_ms->median_ms * 1e-3;
      entry.bandwidth_gbps = bytes / (entry.reference_time_ms.median_ms * 1e-3) / 1e9;
    }
    entry.reference_metrics = report.metrics.reference_kernel;
    entry.baseline_name = report.metrics.baseline_name;
    entry.baseline_time_ms = report.metrics.baseline_time_ms;
    calibration.stages[stage.id] = entry;
    std::cout << fmt::format(
        "{:<13} reference median {:.4f} ms{}{}\n", stage.id, entry.reference_time_ms.median_ms,
        entry.baseline_time_ms
            ? fmt::format(" ({} {:.4f} ms)", entry.baseline_name, entry.baseline_time_ms->median_ms)
            : std::string(),
        entry.reference_metrics
            ? fmt::format(", SM throughput {:.1f}% ({})", entry.reference_metrics->sm_throughput_pct,
                          report.metrics.metrics_source)
            : std::string(", no profiler metrics: ") + report.metrics.metrics_note);
  }
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  calibration.measured_at = stamp;
  std::cout << "wrote " << save_calibration(dir, calibration).string() << "\n";
  return 0;
}

}  // namespace

// `cudojo gpus`: how many CUDA devices this process can see (0 without a driver), then each one's
// name on a line of its own. The server asks a child process, so that the server itself never
// initializes CUDA.
int count_visible_gpus() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  std::cout << count << "\n";
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device) == cudaSuccess) std::cout << properties.name << "\n";
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "worker")
    return cudojo::worker_main(argc >= 3 ? argv[2] : "check");
  if (argc >= 2 && std::string(argv[1]) == "gpus") return count_visible_gpus();
  if (argc >= 2 && std::string(argv[1]) == "nvrtc-compile") return cudojo::compile_child_main();

  CLI::App app{
      "cudojo: learn and prove CUDA kernel skills. Take a stage, edit its kernel, and check it on the GPU:\n"
      "  cudojo stages                        list the track\n"
      "  cudojo show reduction/3              lesson, kernel signature, launch, checks, gate\n"
      "  cudojo starter reduction/3 > mine.cu the starter kernel (--lang python or rust for the others)\n"
      "  cudojo check reduction/3 mine.cu     compile, run, check, time, gate, explain (.cu, .py, .rs)\n"
      "  cudojo build reduction/3 mine.py     compile only, for `cudojo check --build` on a GPU machine\n"
      "Exit codes: 0 accepted, 1 any other verdict on your kernel, 2 usage error, no GPU, or judge failure."};
  app.require_subcommand(1);
  {
    std::string footer = "Environment:";
    for (const auto& variable : cudojo::environment_variables()) {
      footer += fmt::format("\n  {:<28} {}", variable.name, variable.meaning);
    }
    app.footer(footer);
  }
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
  const std::string lang_help = "Language: cuda (CUDA C++, the default), python (Numba) or rust (nvptx64)";
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
  auto* file_option = check->add_option("file", file, "Your kernel: a .cu, .py or .rs file");
  auto* build_option = check->add_option(
      "--build", build_file, "Run a build made by `cudojo build` instead of compiling a file here");
  file_option->excludes(build_option);
  check->add_option("--lang", lang_option, lang_help + " (default: from the file's extension)");
  check->add_flag("--json", json, "Print one JSON object (the report) instead of the table");
  check->add_option("--arch", arch,
                    "Compile for this architecture (default: the GPU's own, sm_90 without one)");
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
  build->add_option("file", file, "Your kernel: a .cu, .py or .rs file")->required();
  build->add_option("-o,--output", build_output, "The build file to write (default: FILE with .build)");
  build->add_option("--lang", lang_option, lang_help + " (default: from the file's extension)");
  build->add_option("--arch", arch, "Architecture to build for (default: sm_90)");
  build->add_flag("--json", json, "Print a JSON summary instead of text");

  auto* toolchains = app.add_subcommand(
      "toolchains",
      "Say which languages this machine can compile (CUDA C++ always; Python needs python3-numba, Rust needs "
      "rustc-web and rust-web-src, both need bubblewrap) and prepare Rust's core for nvptx64 once");
  toolchains->add_option("--arch", arch, "Architecture to prepare for (default: sm_90)");
  toolchains->add_flag("--json", json, "Print JSON");

  ServeSettings serve_settings;
  serve_settings.data_dir = default_data_dir();
  serve_settings.web_dir = default_web_dir();
  if (const char* store = std::getenv(cudojo::env::kStore); store && *store) serve_settings.store = store;
  auto* serve = app.add_subcommand(
      "serve",
      "Serve the course: a web page (lesson, editor, Run, results, history) and a JSON API "
      "(docs/openapi.yaml) over the same judge as `check`. Jobs are queued in a store and survive restarts:\n"
      "  cudojo serve                                            one machine, SQLite in --data-dir\n"
      "  cudojo serve --store postgresql://cudojo@db/cudojo      many nodes sharing one PostgreSQL database\n"
      "  cudojo serve --store postgresql://... --no-http         a GPU host that only judges\n"
      "  cudojo serve --store postgresql://... --no-workers      a web node without a GPU\n"
      "docs/SCALING.md explains leases, fairness and what happens when a node or the database goes away.");
  serve->add_option("--host", serve_settings.host, "Address to listen on")->capture_default_str();
  serve->add_option("--port", serve_settings.port, "Port (0 picks a free one and prints it)")
      ->capture_default_str();
  serve->add_option("--data-dir", serve_settings.data_dir,
                    "Folder for the SQLite database (default: $CUDOJO_DATA or ./cudojo-data)");
  serve->add_option(
      "--workers", serve_settings.workers,
      "Jobs judged at once (default: one per visible GPU, at least one; 0 queues without judging)");
  serve->add_option("--max-queue", serve_settings.limits.max_queue_length, "Queued + running jobs before 429")
      ->capture_default_str();
  serve->add_option("--store", serve_settings.store,
                    "Where jobs and learners live: a postgresql:// URL (shared by every node using it) or a "
                    "SQLite file (default: $CUDOJO_STORE, else <data-dir>/cudojo.sqlite3)");
  bool serve_no_http = false;
  bool serve_no_workers = false;
  serve->add_flag("--no-http", serve_no_http, "Judge only: no listener (a GPU host behind web nodes)");
  serve
      ->add_flag("--no-workers", serve_no_workers,
                 "Serve only: judge nothing (a web node); same as --workers 0")
      ->excludes("--workers");
  serve->add_option("--node-name", serve_settings.node_name,
                    "This node's name in /api/nodes and in reports (default: <host>-<pid>)");
  serve
      ->add_option("--lease-seconds", serve_settings.limits.job_lease_seconds,
                   "How long a running job stays this node's without a renewal; after it, any node gives "
                   "the job to another judge")
      ->check(CLI::Range(2.0, 3600.0))
      ->capture_default_str();
  serve->add_option("--web-dir", serve_settings.web_dir,
                    "Folder holding the page (default: the installed web/)");

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : kExitUsage;
  }

  try {
    if (*lab_command) return cmd_lab(lab_what, json, lab_csv, lab_plot);
    if (*toolchains) return cmd_toolchains(arch, json);
    const auto course = load_course(course_dir);
    if (calibration_dir.empty()) calibration_dir = default_calibration_dir(course_dir);
    if (*calibrate) return cmd_calibrate(course, calibration_dir);
    if (*stages) return cmd_stages(course, json);
    if (*serve) {
      serve_settings.calibration_dir = calibration_dir;
      serve_settings.http = !serve_no_http;
      if (serve_no_workers) serve_settings.workers = 0;
      if (serve_no_http && serve_settings.workers == 0)
        throw UsageError("--no-http with no workers would do nothing; give one of them up");
      // A short lease needs a heartbeat well inside it.
      serve_settings.limits.heartbeat_ms =
          std::min(serve_settings.limits.heartbeat_ms,
                   static_cast<int>(serve_settings.limits.job_lease_seconds * 1000 / 4));
      return run_server(course, serve_settings);
    }
    const Stage& stage = require_stage(course, stage_id);
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
      require_file(file);
      const Language language = language_of(file, lang_option);
      if (build_output.empty())
        build_output = std::filesystem::path(file).replace_extension(".build").string();
      return cmd_build(stage, file, language, arch, build_output, json);
    }

    CheckRequest request;
    request.stage = &stage;
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
      require_file(file);
      request.language = language_of(file, lang_option);
      request.source = read_submission(file, request.workers.limits.max_source_bytes);
      request.file_name = sanitize_file_name(file);
    }
    if (!arch.empty()) request.arch = require_arch(arch);
    if (*seed_option) request.seed = parse_seed(seed_text);
    request.workers.sanitize = !no_sanitize;
    request.profile = !no_profile;
    request.calibration_dir = calibration_dir.string();
    request.workers.worker_executable = self_executable();
    request.cuda_include_dir = default_cuda_include_dir();
    const Report report = run_check(request);
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

// The subcommands that use this machine's GPU or toolchains directly: `toolchains`, `lab`,
// `calibrate` and the internal `gpus`.
#include "cli/gpu_commands.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "compile/frontend.h"
#include "compile/nvrtc_compiler.h"
#include "compile/sandbox.h"
#include "gate/calibration.h"
#include "gpu/gpu.h"
#include "lab/lab.h"
#include "run/judge.h"

namespace cudojo::cli {

// What each language needs on this machine, and the one-time preparation (Rust's core for nvptx64,
// 20-30 s) so that the first Rust check does not pay for it.
int cmd_toolchains(const std::string& arch, bool json) {
  if (!arch.empty()) require_arch(arch);  // a usage error before the 20-30 s of preparing
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
    request.all_metrics = true;  // the calibrated SM throughput is what gates compare with
    request.workers.worker_executable = self_executable();
    request.cuda_include_dir = default_cuda_include_dir();
    const Report report = run_check(request);
    if (report.verdict == Verdict::kNoDevice) {
      // The worker's message speaks of "the submission"; calibrating has none, only references.
      std::cerr << fmt::format(
          "cudojo calibrate: no CUDA device is usable here ({}); calibrating times every stage's "
          "reference, which needs an NVIDIA GPU and driver: run it on the GPU machine whose figures "
          "you want; nothing written\n",
          report.error_name.value_or("no device"));
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

}  // namespace cudojo::cli

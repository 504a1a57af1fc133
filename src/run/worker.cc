// `cudojo worker`: the process that runs learner code. It reads one Job on stdin, compiles the
// submission and the reference with NVRTC, drives the stage's contract on the GPU, and writes
// protocol messages on fd 3 (see protocol.h). It judges nothing: it reports what happened, with
// the test results and findings computed by check/, and the parent decides the verdict.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <future>
#include <iostream>
#include <iterator>
#include <memory>

#include "check/barriers.h"
#include "common/cuda_check.h"
#include "compile/barrier_instrumentation.h"
#include "compile/nvrtc_compiler.h"
#include "stage/contract_info.h"
#include "contract/driver.h"
#include "measure/profiler.h"
#include "gpu/gpu.h"
#include "run/protocol.h"

namespace cudojo {

namespace {

constexpr int kMessageFd = 3;

void send(const nlohmann::json& message) {
  const std::string line = message.dump() + "\n";
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = write(kMessageFd, line.data() + written, line.size() - written);
    if (n <= 0) return;  // the parent has gone; nothing left to tell
    written += static_cast<std::size_t>(n);
  }
}

class PipeAnnouncer : public PhaseAnnouncer {
 public:
  void reference_time(double ms) override { send({{"event", "reference_time"}, {"ms", ms}}); }
  void phase(std::string_view name, int launches) override {
    send({{"event", "phase"}, {"name", name}, {"launches", launches}});
  }
};

CompileRequest compile_request(const Job& job, const std::string& source, const std::string& file_name,
                               const std::string& arch) {
  const ContractInfo* contract = find_contract_info(job.stage.contract);
  CompileRequest request;
  request.source = source;
  request.file_name = file_name;
  request.kernel_name = job.stage.kernel;
  request.kernel_parameters = std::string(contract->parameters);
  request.kernel_pointer_type = std::string(contract->pointer_type);
  request.arch = arch;
  request.cuda_include_dir = job.cuda_include_dir;
  request.max_source_bytes = job.max_source_bytes;
  request.max_log_bytes = job.max_log_bytes;
  return request;
}

bool is_kernel_fault(cudaError_t code) {
  switch (code) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorInvalidAddressSpace:
      return true;
    default:
      return false;
  }
}

void send_result(const char* outcome, const Report& report) {
  send({{"event", "result"}, {"outcome", outcome}, {"report", report}});
}

void fill_metrics(const ContractOutcome& outcome, const GpuInfo& gpu, Metrics& metrics) {
  metrics.n = outcome.timed_n;
  metrics.time_ms = outcome.submission_time;
  metrics.reference_time_ms = outcome.reference_time;
  if (outcome.submission_time && outcome.reference_time && outcome.reference_time->median_ms > 0) {
    metrics.time_ratio = outcome.submission_time->median_ms / outcome.reference_time->median_ms;
  }
  if (outcome.submission_time && outcome.bytes_read_per_launch > 0 &&
      outcome.submission_time->median_ms > 0) {
    metrics.bandwidth_gbps =
        outcome.bytes_read_per_launch / (outcome.submission_time->median_ms * 1e-3) / 1e9;
    if (gpu.peak_read_gbps > 0) metrics.pct_of_peak = 100.0 * *metrics.bandwidth_gbps / gpu.peak_read_gbps;
  } else if (outcome.submission_time) {
    metrics.note = "this contract reads no input array, so bandwidth is not reported";
  }
}

// The barrier check: the counted build of the submission, launched once at the tool size on its
// own buffers, after the tests and before anything is timed. Runs only learner code that already
// ran in the tests; a fault here is still the learner's (the caller catches it).
void check_barriers(const Job& job, GpuSession& gpu, ContractDriver& driver, CompileResult& counted_build,
                    PhaseAnnouncer& announce, Report& report) {
  BarrierCheckSummary& summary = report.barrier_check;
  if (!counted_build.ok) {
    summary.note = "the counted build did not compile (the submission redefines a barrier name?); barriers "
                   "were not checked";
    return;
  }
  LoadedKernel counted(counted_build.cubin, counted_build.lowered_name, job.stage.launch.dynamic_shared_bytes);
  ContractContext context{job.stage, gpu, counted, counted, job.seed, announce};
  announce.phase("barrier check", 1);
  driver.launch_once_for_tools(context, job.tool_size, counted, {});
  BarrierCounts counts;
  const auto shape = counted.read_global(kBarrierShapeSymbol, 2);
  if (shape.size() == 2) {
    counts.threads_per_block = shape[0];
    counts.blocks = shape[1];
  }
  const std::uint64_t threads = static_cast<std::uint64_t>(counts.threads_per_block) * counts.blocks;
  counts.passes_per_thread =
      counted.read_global(kBarrierPassesSymbol, std::min<std::uint64_t>(threads, kBarrierThreadSlots));
  counts.arrivals_per_line = counted.read_global(kBarrierLinesSymbol, kBarrierLineSlots);
  summary.ran = true;
  summary.n = job.tool_size;
  for (const auto arrivals : counts.arrivals_per_line) summary.arrivals += arrivals;
  if (auto finding = divergent_barrier_finding(counts)) report.findings.push_back(*finding);
}

// Profile mode: the reference, then the submission, once each at the performance size.
int profile(const Job& job, GpuSession& gpu, ContractDriver& driver, const LoadedKernel& submission,
            const LoadedKernel& reference, PhaseAnnouncer& announce, Report& report) {
  ContractContext context{job.stage, gpu, submission, reference, job.seed, announce};
  const std::int64_t n = job.stage.contract == "counter" ? 0 : job.stage.performance_size;
  nlohmann::json profile_json;
  try {
    if (job.use_cupti) {
      const std::vector<ProfiledLaunch> launches = {
          [&](const LaunchMarks& marks) { driver.launch_once_for_tools(context, n, reference, marks); },
          [&](const LaunchMarks& marks) { driver.launch_once_for_tools(context, n, submission, marks); },
      };
      const ProfileResult result = profile_with_cupti(0, launches, [&] { gpu.flush_l2(); });
      profile_json = {{"ok", result.ok},
                      {"source", result.source},
                      {"error", result.error},
                      {"passes", result.passes},
                      {"kernels", result.kernels}};
    } else {
      // ncu flushes the caches itself before each kernel it profiles.
      driver.launch_once_for_tools(context, n, reference, {});
      driver.launch_once_for_tools(context, n, submission, {});
      profile_json = {
          {"ok", true}, {"source", "launched for ncu"}, {"error", ""}, {"kernels", nlohmann::json::array()}};
    }
  } catch (const LearnerFault& fault) {
    report.error_name = fault.error_name();
    report.message = fault.what();
    send_result(outcome::kRuntimeError, report);
    return 0;
  }
  send(
      {{"event", "result"}, {"outcome", outcome::kCompleted}, {"report", report}, {"profile", profile_json}});
  return 0;
}

int run_job(const Job& job) {
  Report report;
  report.stage = job.stage.id;
  report.file = job.file_name;
  report.seed = job.seed;

  // Which GPU (if any) decides the architecture; without one we still compile, for sm_90 unless
  // told otherwise, so compile errors reach the learner on any machine.
  int device_count = 0;
  const cudaError_t device_status = cudaGetDeviceCount(&device_count);
  const bool device_present = device_status == cudaSuccess && device_count > 0;
  std::string arch = job.arch.value_or("sm_90");
  if (device_present && !job.arch) {
    cudaDeviceProp prop{};
    CUDOJO_CUDA(cudaGetDeviceProperties(&prop, 0));
    arch = fmt::format("sm_{}{}", prop.major, prop.minor);
  }

  // The compiles run at once: they are independent and NVRTC is thread-safe across programs. A
  // tool run needs no reference, and reuses the check's builds when the parent passes them.
  const bool tool_run = job.mode == "sanitize";
  const bool profile_run = job.mode == "profile";
  auto build = [&](const std::optional<BuiltKernel>& built, const std::string& source,
                   const std::string& file_name) {
    if (!built) return compile_kernel(compile_request(job, source, file_name, arch));
    CompileResult reused;
    reused.ok = true;
    reused.cubin = built->cubin;
    reused.lowered_name = built->lowered_name;
    return reused;
  };
  std::future<CompileResult> reference_future;
  if (!tool_run) {
    reference_future = std::async(std::launch::async,
                                  [&] { return build(job.reference_build, job.reference_source, "reference.cu"); });
  }
  // The counted build for the barrier check, only where the tests run.
  std::future<CompileResult> counted_future;
  if (!tool_run && !profile_run) {
    counted_future = std::async(std::launch::async, [&] {
      CompileRequest request = compile_request(job, job.source, job.file_name, arch);
      request.pre_include_name = std::string(kBarrierHeaderName);
      request.pre_include_text = std::string(barrier_check_header());
      return compile_kernel(request);
    });
  }
  CompileResult submission = build(job.submission_build, job.source, job.file_name);
  CompileResult reference = tool_run ? CompileResult{} : reference_future.get();
  CompileResult counted_build = counted_future.valid() ? counted_future.get() : CompileResult{};

  report.compile.ok = submission.ok;
  report.compile.arch = arch;
  report.compile.nvrtc = nvrtc_version();
  report.compile.log = submission.log;
  report.compile.diagnostics = submission.diagnostics;
  report.compile.compile_ms = submission.compile_ms;
  nlohmann::json builds = nlohmann::json::object();
  if (job.mode == "check" && submission.ok) {
    builds["submission"] = BuiltKernel{submission.lowered_name, submission.cubin};
    if (reference.ok) builds["reference"] = BuiltKernel{reference.lowered_name, reference.cubin};
  }
  send({{"event", "compiled"},
        {"compile",
         {{"ok", report.compile.ok},
          {"arch", arch},
          {"nvrtc", report.compile.nvrtc},
          {"compile_ms", report.compile.compile_ms}}},
        {"builds", builds}});

  if (!submission.ok) {
    report.message = "the submission did not compile";
    send_result(outcome::kCompileError, report);
    return 0;
  }
  if (!reference.ok && !tool_run) {
    report.message = "the stage's reference did not compile: this is the judge's fault\n" + reference.log;
    send_result(outcome::kInternalError, report);
    return 0;
  }
  if (!device_present) {
    report.error_name = device_status == cudaSuccess ? "cudaErrorNoDevice" : cudaGetErrorName(device_status);
    report.message = fmt::format(
        "the submission compiled, but no CUDA device is usable here ({}); running, checking and "
        "timing a kernel needs an NVIDIA GPU and driver",
        *report.error_name);
    send_result(outcome::kNoDevice, report);
    return 0;
  }

  GpuSession gpu(0, job.cuda_include_dir);
  report.gpu = gpu.info();
  std::unique_ptr<LoadedKernel> submission_kernel;
  try {
    submission_kernel = std::make_unique<LoadedKernel>(submission.cubin, submission.lowered_name,
                                                       job.stage.launch.dynamic_shared_bytes);
  } catch (const CudaError& error) {
    report.compile.ok = false;
    report.compile.diagnostics.push_back(
        {job.file_name, 0, "error",
         fmt::format("the compiled code has no loadable kernel named {} ({}); is it declared __global__?",
                     job.stage.kernel, error.name())});
    report.message = "the submission compiled but its kernel could not be loaded";
    send_result(outcome::kCompileError, report);
    return 0;
  }
  PipeAnnouncer announce;
  auto driver = make_contract_driver(job.stage.contract);
  if (tool_run) {
    // The submission stands in for the reference: nothing but the one launch runs.
    ContractContext context{job.stage, gpu, *submission_kernel, *submission_kernel, job.seed, announce};
    try {
      driver->launch_once_for_tools(context, job.tool_size, *submission_kernel, {});
    } catch (const LearnerFault& fault) {
      report.error_name = fault.error_name();
      report.message = fault.what();
      send_result(outcome::kRuntimeError, report);
      return 0;
    }
    send_result(outcome::kCompleted, report);
    return 0;
  }
  LoadedKernel reference_kernel(reference.cubin, reference.lowered_name,
                                job.stage.launch.dynamic_shared_bytes);
  if (profile_run) return profile(job, gpu, *driver, *submission_kernel, reference_kernel, announce, report);
  gpu.measure_peak_read_gbps();
  report.gpu = gpu.info();

  ContractContext context{job.stage, gpu, *submission_kernel, reference_kernel, job.seed, announce};
  ContractOutcome outcome;
  try {
    announce.reference_time(driver->time_reference(context));
    driver->run_tests(context, outcome);
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    report.determinism = outcome.determinism;
    check_barriers(job, gpu, *driver, counted_build, announce, report);
    const bool correct =
        std::all_of(report.tests.begin(), report.tests.end(), [](const TestResult& t) { return t.ok; }) &&
        report.findings.empty();
    if (correct) {
      driver->measure(context, outcome);
      fill_metrics(outcome, gpu.info(), report.metrics);
    } else {
      report.metrics.note = "not timed: the submission is not correct yet";
    }
  } catch (const LearnerFault& fault) {
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    report.error_name = fault.error_name();
    report.message = fault.what();
    send_result(outcome::kRuntimeError, report);
    return 0;
  } catch (const CudaError& error) {
    // Kernel faults are reported asynchronously; one raised by the judge's next call after
    // learner code ran is still the learner's fault.
    if (!is_kernel_fault(error.code())) throw;
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    report.error_name = error.name();
    report.message = error.what();
    send_result(outcome::kRuntimeError, report);
    return 0;
  }
  send_result(outcome::kCompleted, report);
  return 0;
}

}  // namespace

int worker_main() {
  // Device printf goes to stdout; unbuffered, so what was printed before a kill still arrives.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  Job job;
  try {
    const std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    job = nlohmann::json::parse(input).get<Job>();
  } catch (const std::exception& error) {
    Report report;
    report.message = fmt::format("the worker could not read its job: {}", error.what());
    send_result(outcome::kInternalError, report);
    return 2;
  }
  try {
    return run_job(job);
  } catch (const std::exception& error) {
    Report report;
    report.stage = job.stage.id;
    report.file = job.file_name;
    report.message = fmt::format("the judge failed: {}", error.what());
    send_result(outcome::kInternalError, report);
    return 2;
  }
}

}  // namespace cudojo

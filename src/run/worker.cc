// `cudojo worker`: the process that runs learner code. It starts CUDA at once (so a pre-started
// worker has its context before its job arrives), reads one Job line on stdin, compiles the
// submission and the reference with NVRTC, drives the stage's contract on the GPU, and writes
// protocol messages on fd 3 (see protocol.h). It judges nothing: it reports what happened, with
// the test results and findings computed by check/, and the parent decides the verdict.
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common/cuda_check.h"
#include "common/environment.h"
#include "common/json_text.h"
#include "compile/nvrtc_compiler.h"
#include "contract/driver.h"
#include "gpu/gpu.h"
#include "measure/profiler.h"
#include "run/compile_child.h"
#include "run/protocol.h"
#include "run/worker_builds.h"
#include "stage/contract_info.h"

namespace cudojo {

namespace {

constexpr int kMessageFd = 3;
using Clock = std::chrono::steady_clock;

// Messages come from two threads (CUDA's start-up says "ready"); a line longer than a pipe's atomic
// write must not be interleaved with another.
std::mutex send_mutex;

void send(const nlohmann::json& message) {
  const std::string line = json_text(message) + "\n";
  std::lock_guard lock(send_mutex);
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = write(kMessageFd, line.data() + written, line.size() - written);
    if (n <= 0) return;  // the parent has gone; nothing left to tell
    written += static_cast<std::size_t>(n);
  }
}

void send_result(const char* outcome, const Report& report) {
  send({{"event", "result"}, {"outcome", outcome}, {"report", report}});
}

// Adds the time since `since` to the report's timings under `name`, and restarts the clock.
class StepClock {
 public:
  explicit StepClock(Report& report) : report_(report) {}
  void step(const std::string& name) {
    const auto now = Clock::now();
    report_.timings_ms[name] += std::chrono::duration<double, std::milli>(now - since_).count();
    since_ = now;
  }
  void restart() { since_ = Clock::now(); }

 private:
  Report& report_;
  Clock::time_point since_ = Clock::now();
};

class PipeAnnouncer : public PhaseAnnouncer {
 public:
  void reference_time(double ms) override { send({{"event", "reference_time"}, {"ms", ms}}); }
  void phase(std::string_view name, int launches) override {
    send({{"event", "phase"}, {"name", name}, {"launches", launches}});
  }
};

// CUDA's start-up, on a thread of its own from the first instruction: which device, its arch, the
// context and the judge's GpuSession. Creating a context costs a good part of a second on a large
// GPU; meanwhile the main thread reads the job and compiles.
class CudaStartup {
 public:
  explicit CudaStartup(bool with_judge_kernels)
      : with_judge_kernels_(with_judge_kernels), thread_([this] { run(); }) {}
  ~CudaStartup() {
    if (thread_.joinable()) thread_.join();
  }
  CudaStartup(const CudaStartup&) = delete;
  CudaStartup& operator=(const CudaStartup&) = delete;

  struct Device {
    cudaError_t status = cudaSuccess;
    bool present = false;
    std::string arch;  // "sm_90" when present
  };
  // Waits for the device query (fast: no context yet).
  const Device& device() { return device_future_.get(); }
  // Waits for the context and the judge's session; rethrows the judge's own failure.
  GpuSession& session() {
    session_future_.wait();
    if (error_) std::rethrow_exception(error_);
    return *session_;
  }
  double device_ms() const { return device_ms_; }
  double session_ms() const { return session_ms_; }

 private:
  void run() {
    const auto started = Clock::now();
    Device device;
    int count = 0;
    device.status = cudaGetDeviceCount(&count);
    device.present = device.status == cudaSuccess && count > 0;
    if (device.present) {
      int major = 0, minor = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) == cudaSuccess) {
        device.arch = fmt::format("sm_{}{}", major, minor);
      } else {
        device.present = false;
      }
    }
    device_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    device_promise_.set_value(device);
    if (device.present) {
      try {
        session_ = std::make_unique<GpuSession>(0, default_cuda_include_dir(), with_judge_kernels_);
      } catch (...) {
        error_ = std::current_exception();
      }
    }
    session_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - started).count() - device_ms_;
    session_promise_.set_value();
    // A worker started ahead of its job is now idle on the GPU until the job arrives: the parent of
    // the job before may wait for this before it times anything.
    send({{"event", "ready"}});
  }

  std::promise<Device> device_promise_;
  std::shared_future<Device> device_future_ = device_promise_.get_future().share();
  std::promise<void> session_promise_;
  std::future<void> session_future_ = session_promise_.get_future();
  std::unique_ptr<GpuSession> session_;
  std::exception_ptr error_;
  double device_ms_ = 0;
  double session_ms_ = 0;
  bool with_judge_kernels_;
  std::thread thread_;  // last: starts once the members above exist
};

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

void fill_metrics(const ContractOutcome& outcome, const GpuInfo& gpu, Metrics& metrics) {
  metrics.n = outcome.timed_n;
  metrics.time_ms = outcome.submission_time;
  metrics.reference_time_ms = outcome.reference_time;
  if (outcome.submission_time && outcome.reference_time && outcome.reference_time->median_ms > 0) {
    metrics.time_ratio = outcome.submission_time->median_ms / outcome.reference_time->median_ms;
  }
  if (outcome.baseline_time) {
    metrics.baseline_name = outcome.baseline_name;
    metrics.baseline_time_ms = outcome.baseline_time;
    if (outcome.submission_time && outcome.baseline_time->median_ms > 0) {
      metrics.baseline_ratio = outcome.submission_time->median_ms / outcome.baseline_time->median_ms;
    }
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

// Opens once, for good: whether the profiler thread may use the GPU now, or should give up.
class Gate {
 public:
  void open(bool go) {
    {
      std::lock_guard lock(mutex_);
      if (!go_) go_ = go;
    }
    changed_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return go_.has_value(); });
    return *go_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<bool> go_;
};

// Hardware metrics of one launch each of the reference and the submission at the performance
// size, with CUPTI in this process (its context and modules are already loaded). CUPTI's set-up
// runs on a thread from the start of the tests; its replayed launches wait behind the gate, which
// the worker opens once it has the GPU to itself and has timed the kernel. A failure is a note;
// the parent then tries ncu.
class BackgroundProfile {
 public:
  BackgroundProfile(const Job& job, ContractContext& context, ContractDriver& driver) {
    // CUDOJO_PROFILER=ncu skips CUPTI, so the parent measures with ncu: how the two collectors are
    // compared (scripts/metrics-check.sh).
    if (const char* forced = std::getenv(env::kProfiler); forced && std::string(forced) == "ncu") {
      skipped_ = fmt::format("CUPTI skipped ({}=ncu)", env::kProfiler);
      return;
    }
    const std::int64_t n = job.stage.contract == "counter" ? 0 : job.stage.performance_size;
    result_ = std::async(std::launch::async, [this, &context, &driver, n, passes = job.profiler_max_passes] {
      const std::vector<ProfiledLaunch> launches = {
          [&, n](const LaunchMarks& marks) {
            driver.launch_once_for_tools(context, n, context.reference, marks);
          },
          [&, n](const LaunchMarks& marks) {
            driver.launch_once_for_tools(context, n, context.submission, marks);
            // Every replayed launch is judged, so a kernel cannot look efficient only when no answer
            // is read.
            ++profiled_launches_;
            if (driver.tool_answer_right(context) == false) ++wrong_profiled_launches_;
          },
      };
      // Reaching the gate means CUPTI's set-up is done; collect() waits for that, within a bound.
      return profile_with_cupti(
          0, launches, [&] { context.gpu.flush_l2(); }, passes,
          [this] {
            set_up_ = true;
            return gate_.wait();
          });
    });
  }
  // Never leaves the thread waiting: a check that ends early (a fault, a wrong answer) cancels it.
  ~BackgroundProfile() {
    gate_.open(false);
    if (result_.valid()) result_.wait();
  }
  BackgroundProfile(const BackgroundProfile&) = delete;
  BackgroundProfile& operator=(const BackgroundProfile&) = delete;

  // Runs the replayed launches now and fills the report's metrics. CUPTI's set-up gets at most
  // `setup_wait_ms` more: past that the parent measures with ncu instead, rather than the kernel
  // running into its time limit over the judge's own tool.
  void collect(Report& report, double setup_wait_ms, PhaseAnnouncer& announce, int max_passes) {
    if (!result_.valid()) {
      report.metrics.metrics_note = skipped_;
      return;
    }
    const auto give_up =
        Clock::now() + std::chrono::microseconds(static_cast<long long>(setup_wait_ms * 1000));
    while (!set_up_ && result_.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
      if (Clock::now() >= give_up) {
        gate_.open(false);
        report.metrics.metrics_note =
            fmt::format("CUPTI: its set-up took longer than {:.0f} ms", setup_wait_ms);
        return;
      }
    }
    // Each pass replays both kernels once.
    announce.phase("profile", 2 * max_passes);
    gate_.open(true);
    const ProfileResult result = result_.get();
    report.timings_ms["profile_setup"] = result.setup_ms;
    report.timings_ms["profile_passes"] = result.passes_ms;
    fill(result, report);
    if (wrong_profiled_launches_ > 0) {
      report.findings.push_back(
          {std::string(finding_code::kStaleAnswer),
           fmt::format("{} of the {} launches the profiler replayed answered wrong, though the tests and "
                       "the timed launches were right: every launch is judged, including those "
                       "measured for the hardware metrics, so a kernel must do the same work each time",
                       wrong_profiled_launches_.load(), profiled_launches_.load()),
           std::nullopt});
    }
  }

 private:
  static void fill(const ProfileResult& result, Report& report) {
    report.metrics.metrics_passes = result.passes;
    if (result.ok && result.kernels.size() >= 2) {
      report.metrics.reference_kernel = result.kernels[0];
      report.metrics.kernel = result.kernels[1];
      report.metrics.metrics_source = "cupti";
      report.metrics.metrics_note = result.error;  // metrics CUPTI refused, if any
    } else {
      report.metrics.metrics_source = "";
      report.metrics.metrics_note = "CUPTI: " + (result.error.empty() ? "no kernels profiled" : result.error);
    }
  }

  Gate gate_;
  std::atomic<bool> set_up_{false};
  std::atomic<int> profiled_launches_{0};
  std::atomic<int> wrong_profiled_launches_{0};
  std::future<ProfileResult> result_;
  std::string skipped_;
};

// Blocks until the parent gives the GPU to this worker alone; false when it says not to measure
// (a tool already found the kernel wrong) or has gone.
bool await_gpu() {
  send({{"event", "await_gpu"}});
  std::string line;
  if (!std::getline(std::cin, line)) return false;
  const auto grant = nlohmann::json::parse(line, nullptr, false);
  return !grant.is_discarded() && grant.value("event", "") == kGpuGrantEvent && grant.value("measure", false);
}

// Everything after the compile: load, run the mode's work, send the result. Learner faults are
// caught once, by the caller.
void run_on_gpu(const Job& job, GpuSession& gpu, const Builds& builds, const LoadedKernel& submission,
                StepClock& clock, Report& report) {
  PipeAnnouncer announce;
  auto driver = make_contract_driver(job.stage.contract);
  const int shared_bytes = job.stage.launch.dynamic_shared_bytes;
  std::unique_ptr<LoadedKernel> second_submission, second_reference;
  if (builds.second_submission.ok) {
    try {
      second_submission = std::make_unique<LoadedKernel>(builds.second_submission.image,
                                                         builds.second_submission.lowered_name, shared_bytes,
                                                         builds.second_submission.abi);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), fmt::format("the second kernel, {}, could not be loaded: {}",
                                                   job.stage.second_kernel, error.what()));
    }
  }
  if (builds.second_reference.ok) {
    second_reference =
        std::make_unique<LoadedKernel>(builds.second_reference.image, builds.second_reference.lowered_name,
                                       shared_bytes, builds.second_reference.abi);
  }
  if (job.mode == WorkerMode::kSanitize) {
    // The submission stands in for the reference: nothing but the one launch runs.
    ContractContext context{job.stage,
                            gpu,
                            submission,
                            submission,
                            job.seed,
                            announce,
                            second_submission.get(),
                            second_submission.get()};
    driver->launch_once_for_tools(context, job.tool_size, submission, {});
    clock.step("launch");
    send_result(outcome::kCompleted, report);
    return;
  }
  LoadedKernel reference(builds.reference.image, builds.reference.lowered_name, shared_bytes);
  ContractContext context{job.stage,
                          gpu,
                          submission,
                          reference,
                          job.seed,
                          announce,
                          second_submission.get(),
                          second_reference.get()};
  clock.step("load");
  if (job.mode == WorkerMode::kLaunchForNcu) {
    // ncu flushes the caches itself before each kernel it profiles.
    const std::int64_t n = job.stage.contract == "counter" ? 0 : job.stage.performance_size;
    driver->launch_once_for_tools(context, n, reference, {});
    driver->launch_once_for_tools(context, n, submission, {});
    send_result(outcome::kCompleted, report);
    return;
  }

  std::optional<BackgroundProfile> profile;
  if (job.profile) profile.emplace(job, context, *driver);
  ContractOutcome outcome;
  if (job.stage.deterministic) add_float_atomic_findings(job, builds, outcome.findings);
  try {
    announce.reference_time(driver->time_reference(context));
    clock.step("reference_time");
    driver->run_tests(context, outcome);
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    report.determinism = outcome.determinism;
    clock.step("tests");
    check_counted_build(job, gpu, *driver, builds.counted, second_submission.get(), announce, report);
    clock.step("barrier_check");
  } catch (...) {
    report.tests = outcome.tests;
    report.findings = outcome.findings.finish();
    throw;
  }
  if (!is_correct(report.tests, report.findings)) {
    report.metrics.note = "not timed: the submission is not correct yet";
    send_result(outcome::kCompleted, report);
    return;
  }
  const bool measure = await_gpu();
  clock.step("wait_for_gpu");
  if (!measure) {
    report.metrics.note = "not timed: the submission is not correct yet";
    send_result(outcome::kCompleted, report);
    return;
  }
  gpu.measure_peak_read_gbps();
  report.gpu = gpu.info();
  clock.step("peak_probe");
  driver->measure(context, outcome);
  fill_metrics(outcome, gpu.info(), report.metrics);
  clock.step("timing");
  // The timed launches are checked too (a kernel answering from an earlier launch): what they
  // found joins the tests' findings, and such a kernel is not profiled.
  report.findings = outcome.findings.finish();
  if (profile && is_correct(report.tests, report.findings)) {
    profile->collect(report, job.profiler_setup_wait_ms, announce, job.profiler_max_passes);
    clock.step("profile");
  }
  send_result(outcome::kCompleted, report);
}

void run_job(const Job& job, CudaStartup& cuda, Clock::time_point process_start) {
  Report report;
  report.stage = job.stage.id;
  report.file = job.file_name;
  report.seed = job.seed;
  StepClock clock(report);
  report.timings_ms["worker_start"] =
      std::chrono::duration<double, std::milli>(Clock::now() - process_start).count();

  if (job.language != Language::kCuda && !job.submission_build) {
    // Only CUDA C++ is compiled here; the parent's front end compiles the other languages.
    report.message = fmt::format("a {} submission reached the worker uncompiled", display_name(job.language));
    send_result(outcome::kInternalError, report);
    return;
  }
  // Compile for the arch we expect while CUDA names the real one; a wrong guess compiles again.
  std::string arch = job.arch.value_or(job.arch_guess);
  Builds builds = compile_all(job, arch);
  clock.step("compile");
  const CudaStartup::Device& device = cuda.device();
  clock.step("device_query");
  if (!job.arch && device.present && device.arch != arch) {
    arch = device.arch;
    builds = compile_all(job, arch);
    clock.step("compile_again_for_device_arch");
  }
  const CompileResult& submission = builds.submission;
  report.compile.ok = submission.ok;
  report.compile.arch = arch;
  report.compile.nvrtc = nvrtc_version();
  report.compile.log = submission.log;
  report.compile.diagnostics = submission.diagnostics;
  report.compile.compile_ms = submission.compile_ms;
  nlohmann::json sent_builds = nlohmann::json::object();
  if (job.mode == WorkerMode::kCheck && submission.ok) {
    // The tools watch what is judged: the quiet build when there is one.
    const CompileResult& watched = builds.quiet.ok ? builds.quiet : submission;
    sent_builds["submission"] = BuiltKernel{watched.lowered_name, watched.image, watched.format, watched.abi};
    if (builds.reference.ok)
      sent_builds["reference"] = BuiltKernel{builds.reference.lowered_name, builds.reference.image,
                                             builds.reference.format, builds.reference.abi};
    for (const auto& [name, built] :
         {std::pair<const char*, const CompileResult*>{"second_submission", &builds.second_submission},
          {"second_reference", &builds.second_reference}}) {
      if (built->ok)
        sent_builds[name] = BuiltKernel{built->lowered_name, built->image, built->format, built->abi};
    }
  }
  send({{"event", "compiled"},
        {"compile",
         {{"ok", report.compile.ok},
          {"arch", arch},
          {"nvrtc", report.compile.nvrtc},
          {"compile_ms", report.compile.compile_ms}}},
        {"builds", sent_builds}});

  if (!submission.ok) {
    report.message = "the submission did not compile";
    send_result(outcome::kCompileError, report);
    return;
  }
  if (!job.stage.second_kernel.empty() && !builds.second_submission.ok) {
    report.compile.ok = false;
    report.compile.log = builds.second_submission.log;
    report.compile.diagnostics = builds.second_submission.diagnostics;
    report.message =
        fmt::format("the submission's second kernel, {}, did not compile", job.stage.second_kernel);
    send_result(outcome::kCompileError, report);
    return;
  }
  if (!job.stage.second_kernel.empty() && job.mode != WorkerMode::kSanitize && !builds.second_reference.ok) {
    report.message = "the stage's reference (second kernel) did not compile: this is the judge's fault\n" +
                     builds.second_reference.log;
    send_result(outcome::kInternalError, report);
    return;
  }
  if (job.mode != WorkerMode::kSanitize && !builds.reference.ok) {
    report.message =
        "the stage's reference did not compile: this is the judge's fault\n" + builds.reference.log;
    send_result(outcome::kInternalError, report);
    return;
  }
  if (!device.present) {
    report.error_name = device.status == cudaSuccess ? "cudaErrorNoDevice" : cudaGetErrorName(device.status);
    report.message = fmt::format(
        "the submission compiled, but no CUDA device is usable here ({}); running, checking and "
        "timing a kernel needs an NVIDIA GPU and driver",
        *report.error_name);
    send_result(outcome::kNoDevice, report);
    return;
  }

  GpuSession& gpu = cuda.session();
  report.timings_ms["cuda_start"] = cuda.device_ms() + cuda.session_ms();
  clock.step("wait_for_cuda");
  report.gpu = gpu.info();
  try {
    // Loading is the one place a compiled submission can still be unusable as a kernel.
    std::unique_ptr<LoadedKernel> loaded;
    try {
      loaded = std::make_unique<LoadedKernel>(submission.image, submission.lowered_name,
                                              job.stage.launch.dynamic_shared_bytes, submission.abi);
    } catch (const CudaError& error) {
      report.compile.ok = false;
      report.compile.diagnostics.push_back(
          {job.file_name, 0, "error",
           job.language == Language::kCuda
               ? fmt::format(
                     "the compiled code has no loadable kernel named {} ({}); is it declared __global__?",
                     job.stage.kernel, error.name())
               : fmt::format("the {} kernel {} compiled to PTX that this GPU's driver could not load ({})",
                             display_name(job.language), job.stage.kernel, error.name())});
      report.message = "the submission compiled but its kernel could not be loaded";
      send_result(outcome::kCompileError, report);
      return;
    }
    if (builds.quiet.ok) {
      loaded->print_only_first_launch(
          std::make_unique<LoadedKernel>(builds.quiet.image, builds.quiet.lowered_name,
                                         job.stage.launch.dynamic_shared_bytes, builds.quiet.abi));
      report.output.note =
          "this kernel prints: its first launch ran as written (its output is above); every later launch ran "
          "the same source with printf compiled out, so printing cannot make the check run out of time";
    }
    run_on_gpu(job, gpu, builds, *loaded, clock, report);
  } catch (const LearnerFault& fault) {
    // The one fault path: a CUDA error that surfaced after learner code ran.
    report.error_name = fault.error_name();
    report.message = fault.what();
    send_result(outcome::kRuntimeError, report);
  } catch (const CudaError& error) {
    // Kernel faults are reported asynchronously; one raised by the judge's next call after
    // learner code ran is still the learner's fault.
    if (!is_kernel_fault(error.code())) throw;
    report.error_name = error.name();
    report.message = error.what();
    send_result(outcome::kRuntimeError, report);
  }
}

// Watches the judge process named by CUDOJO_JUDGE_PID from a thread and ends this worker when it
// exits. A pidfd names that one process (not whatever later reuses its number); a judge already
// gone ends the worker at once.
void end_with_the_judge() {
  const char* text = std::getenv(env::kJudgePid);
  if (!text || !*text) return;
  const pid_t judge = static_cast<pid_t>(std::atoi(text));
  if (judge <= 0) return;
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, judge, 0));
  if (fd < 0) {
    if (errno == ESRCH) std::_Exit(3);
    return;  // an old kernel without pidfds: the tool's own budget still bounds the run
  }
  std::thread([fd] {
    pollfd watched{fd, POLLIN, 0};
    while (poll(&watched, 1, -1) < 0 && errno == EINTR) {
    }
    std::_Exit(3);
  }).detach();
}

}  // namespace

int worker_main(std::string_view mode_hint) {
  const auto process_start = Clock::now();
  // The check worker (the one that compiles) never outlives the process that started it: a server
  // killed with SIGKILL must not leave a compile bomb running. (If the parent is already gone before
  // the call, exit.) Tool workers are started by compute-sanitizer or ncu, whose way of starting
  // them we do not control, so they are left to their tool.
  if (mode_hint == to_string(WorkerMode::kCheck)) {
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) std::_Exit(0);
  }
  // The parent's deadlines bound a worker's wall clock; these bound what a runaway one could still
  // take if a deadline were ever missed: CPU seconds, and no core file of a process that holds a
  // CUDA context (gigabytes of mappings).
  const rlimit cpu{kDefaultLimits.worker_cpu_seconds, kDefaultLimits.worker_cpu_seconds + 5}, no_core{0, 0};
  setrlimit(RLIMIT_CPU, &cpu);
  setrlimit(RLIMIT_CORE, &no_core);
  // A worker a tool started (compute-sanitizer, ncu) is the tool's child, not the judge's: it ends
  // as soon as the judge process does, and the tool ends with it.
  if (mode_hint != to_string(WorkerMode::kCheck)) end_with_the_judge();
  // Device printf goes to stdout; unbuffered, so what was printed before a kill still arrives.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  // The parent names the mode on the command line too, so CUDA's start-up (which begins before the
  // job arrives) knows whether the judge's own kernels will be needed.
  CudaStartup cuda(mode_hint != to_string(WorkerMode::kSanitize));
  int code = 0;
  Job job;
  std::string line;
  try {
    if (!std::getline(std::cin, line)) {
      // The parent went away before giving a job (a pre-started worker that was not needed).
      std::_Exit(0);
    }
    job = nlohmann::json::parse(line).get<Job>();
  } catch (const std::exception& error) {
    Report report;
    report.message = fmt::format("the worker could not read its job: {}", error.what());
    send_result(outcome::kInternalError, report);
    std::_Exit(2);
  }
  try {
    run_job(job, cuda, process_start);
  } catch (const std::exception& error) {
    Report report;
    report.stage = job.stage.id;
    report.file = job.file_name;
    report.message = fmt::format("the judge failed: {}", error.what());
    send_result(outcome::kInternalError, report);
    code = 2;
  }
  // The result is sent. A tool wrapped around this worker writes its summary from the CUDA
  // runtime's exit handlers, so its workers end the ordinary way; the check worker skips tearing
  // down the context, modules and buffers one by one, which would only keep the parent waiting
  // (the driver releases them when the process ends).
  std::fflush(stdout);
  if (job.mode != WorkerMode::kCheck) std::exit(code);
  std::_Exit(code);
}

}  // namespace cudojo

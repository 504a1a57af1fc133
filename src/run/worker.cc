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

#include <algorithm>
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
#include "run/cuda_startup.h"
#include "run/protocol.h"
#include "run/worker_builds.h"
#include "run/worker_channel.h"
#include "run/worker_gpu.h"
#include "stage/contract_info.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

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

// `not_reusable`: set when the job leaves something behind that another job could meet (the device
// heap, printed output), whatever its outcome.
void run_job(const Job& job, CudaStartup& cuda, Clock::time_point process_start, bool first_job,
             std::string& not_reusable) {
  Report report;
  report.stage = job.stage.id;
  report.file = job.file_name;
  report.seed = job.seed;
  StepClock clock(report);
  // Other jobs share the GPU: this job holds it only while its work is there (gpu/gpu_turns.h).
  struct TurnsForJob {
    explicit TurnsForJob(bool asked) {
      if (asked) gpu_turns::open(gpu_turns_from_parent());
    }
    ~TurnsForJob() { gpu_turns::close(); }
  } turns(job.gpu_turns);
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
  const bool heap = uses_device_heap(builds);
  if (heap) not_reusable = "its kernel uses the device heap (malloc or free in device code)";
  if (builds.quiet.ok) not_reusable = "its kernel prints";
  send({{"event", "compiled"},
        {"compile",
         {{"ok", report.compile.ok},
          {"arch", arch},
          {"nvrtc", report.compile.nvrtc},
          {"compile_ms", report.compile.compile_ms}}},
        {"builds", sent_builds},
        {"uses_device_heap", heap},
        {"may_use_shared_memory", may_use_shared_memory(builds)},
        {"may_synchronize", may_synchronize(builds)}});

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

  // A start-up still under way when the job came (the parent waits for "ready" only so long)
  // finishes under a turn.
  gpu_turns::brief_begin();
  GpuSession& gpu = cuda.session();
  gpu_turns::brief_end();
  if (first_job) report.timings_ms["cuda_start"] = cuda.device_ms() + cuda.session_ms();
  // The same reading of the PTX that lets racecheck skip such a kernel: plantings without shared
  // memory in the learner's code would prove nothing, and each holds the GPU from other jobs. A
  // launch with dynamic shared memory is planted whatever its PTX says (a pointer made up in the
  // shared window needs no ".shared" in the code).
  gpu.plant_shared_memory(may_use_shared_memory(builds) || job.stage.launch.dynamic_shared_bytes > 0);
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

// After a job, before this worker may take another: only a clean job (it compiled and ran to its
// end, or did not compile) whose kernels left nothing behind, then the GPU is drained and checked
// (a kernel still running, or an error CUDA holds, keeps the worker from being reused; one that
// never finishes runs into the parent's deadline and the worker is killed), and the judge's session
// is made again. `why` says what stopped it.
bool settle_for_next_job(CudaStartup& cuda, std::string& why) {
  const std::string outcome = last_outcome();
  if (outcome != outcome::kCompleted && outcome != outcome::kCompileError) {
    why = fmt::format("its job ended {}", outcome.empty() ? "without a result" : outcome);
    return false;
  }
  if (!why.empty()) return false;
  if (!cuda.device().present) {
    why = "no CUDA device";
    return false;
  }
  try {
    cuda.session();
    cudaError_t error = cudaDeviceSynchronize();
    if (error == cudaSuccess) error = cudaGetLastError();
    if (error != cudaSuccess) {
      why = fmt::format("CUDA reported {} after its job", cudaGetErrorName(error));
      return false;
    }
    cuda.renew_session();
  } catch (const std::exception& error) {
    why = fmt::format("its GPU session could not be made again: {}", error.what());
    return false;
  }
  return true;
}

}  // namespace

int worker_main(std::string_view mode_hint) {
  const auto process_start = Clock::now();
  // The check worker (the one that compiles) and the GPU's profiling process never outlive the
  // process that started them: a server killed with SIGKILL must not leave a compile bomb or a
  // profiler holding the GPU's counters. (If the parent is already gone before the call, exit.)
  // Tool workers are started by compute-sanitizer or ncu, whose way of starting them we do not
  // control, so they are left to their tool.
  const bool parents_child =
      mode_hint == to_string(WorkerMode::kCheck) || mode_hint == to_string(WorkerMode::kProfile);
  if (parents_child) {
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
  if (!parents_child) end_with_the_judge();
  // Device printf goes to stdout; unbuffered, so what was printed before a kill still arrives.
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  // The parent names the mode on the command line too, so CUDA's start-up (which begins before the
  // job arrives) knows whether the judge's own kernels will be needed.
  CudaStartup cuda(mode_hint != to_string(WorkerMode::kSanitize));
  int code = 0;
  Job job;
  for (int jobs_done = 0;; ++jobs_done) {
    std::string line;
    try {
      if (!std::getline(std::cin, line)) {
        // The parent went away before giving a job (a pre-started worker that was not needed, or a
        // warm one it let go). A tool's worker that ran jobs ends the ordinary way, so its tool
        // finishes its log from the runtime's exit handlers.
        if (jobs_done > 0 && !parents_child) std::exit(0);
        std::_Exit(0);
      }
      job = nlohmann::json::parse(line).get<Job>();
    } catch (const std::exception& error) {
      Report report;
      report.message = fmt::format("the worker could not read its job: {}", error.what());
      send_result(outcome::kInternalError, report);
      std::_Exit(2);
    }
    forget_last_outcome();
    std::string not_reusable;
    try {
      run_job(job, cuda, jobs_done == 0 ? process_start : Clock::now(), jobs_done == 0, not_reusable);
    } catch (const std::exception& error) {
      Report report;
      report.stage = job.stage.id;
      report.file = job.file_name;
      report.message = fmt::format("the judge failed: {}", error.what());
      send_result(outcome::kInternalError, report);
      code = 2;
    }
    if (!job.keep_alive) break;
    const bool reusable = settle_for_next_job(cuda, not_reusable);
    send({{"event", kIdleEvent}, {"reusable", reusable}, {"why", not_reusable}});
    if (!reusable) break;
  }
  // The result is sent. A tool wrapped around this worker writes its summary from the CUDA
  // runtime's exit handlers, so its workers end the ordinary way; the check worker skips tearing
  // down the context, modules and buffers one by one, which would only keep the parent waiting
  // (the driver releases them when the process ends).
  std::fflush(stdout);
  if (job.mode == WorkerMode::kSanitize || job.mode == WorkerMode::kLaunchForNcu) std::exit(code);
  std::_Exit(code);
}

}  // namespace cudojo

// The small JSON protocol between the parent and a worker.
//
// parent -> worker stdin, one JSON object per line:
//   a Job                                                        first; a pre-started worker waits for it
//   {"event":"gpu","measure":true|false}                         the answer to await_gpu, and to a
//                                                                gpu_turn asking for shared or alone
//   the next Job                                                 after "idle" with reusable true
// worker -> parent fd 3, one JSON object per line:
//   {"event":"ready"}                                            CUDA's start-up is done (any time; a
//                                                                worker started ahead of its job does
//                                                                no GPU work after it until the job)
// and, in this order:
//   {"event":"compiled","compile":{...},"builds":{...}}           once, after the compiles
//   {"event":"reference_time","ms":0.0123}                       once the reference has been timed
//   {"event":"phase","name":"tests","launches":96}               before each phase that runs learner code
//   {"event":"await_gpu"}                                        a correct kernel, before timing: the
//                                                                worker waits until the parent has
//                                                                the GPU to itself (the tool workers
//                                                                share it until then)
//   {"event":"await_profile","time_ratio":1.02}                  (Job::profile_elsewhere) after timing a
//                                                                kernel still correct: the parent has
//                                                                the GPU's profiling process measure
//                                                                it in this worker's turn alone, then
//                                                                answers {"event":"gpu",...}; the
//                                                                worker has nothing on the GPU meanwhile
//   {"event":"gpu_turn","want":"shared"|"alone"|"none"}          (with gpu_turns, any time in a job)
//                                                                shared: before work on the GPU; alone:
//                                                                before a shared-memory planting; the
//                                                                worker waits for the answer, given once
//                                                                the parent holds the GPU's lease so.
//                                                                none: nothing of the worker's is on the
//                                                                GPU now; no answer (gpu/gpu_turns.h)
//   {"event":"result","outcome":"completed"|..., "report":{...}}  last of the job
//   {"event":"idle","reusable":true|false,"why":"..."}           (with keep_alive) after the result: the
//                                                                worker has settled the GPU and waits for
//                                                                another job, or says why it cannot and ends
// The worker is passive: it never decides a verdict, and the parent never trusts a message to be
// well-formed (a malformed line is the judge's own failure, internal_error).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "compile/kernel_image.h"
#include "stage/language.h"
#include "stage/stage.h"

namespace cudojo {

// A kernel already compiled for this GPU: the check worker sends the parent its builds before any
// learner code runs, and the later workers of the same check (sanitizers, profiler) load them
// instead of compiling again; a source that includes CUB or cooperative groups costs about a
// second per compile.
struct BuiltKernel {
  std::string lowered_name;
  std::vector<char> image;  // a cubin, or PTX text ending with a NUL
  ImageFormat format = ImageFormat::kCubin;
  ParameterAbi abi = ParameterAbi::kPlain;
};

// What a worker does with its job.
//   kCheck: the full run (tests, barrier check, timing, CUPTI metrics).
//   kSanitize: one launch of the submission at tool_size in exactly-sized buffers, for the
//     compute-sanitizer tool wrapped around the worker to watch.
//   kLaunchForNcu: one launch of the reference, then one of the submission, at the performance
//     size, for ncu wrapped around the worker to measure (when CUPTI failed in the check worker).
//   kProfile: the GPU's profiling process (run/gpu_profiler.h), kept by a server, one per GPU:
//     CUPTI's metrics of a kernel the check worker has just timed, its builds given, the range
//     profiler kept enabled from one job to the next.
enum class WorkerMode { kCheck, kSanitize, kLaunchForNcu, kProfile };
std::string_view to_string(WorkerMode mode);

struct Job {
  Stage stage;  // without lesson text; sources below
  std::string source;
  std::string file_name;
  std::string reference_source;
  std::optional<std::string> arch;  // override; default: the GPU's own
  std::string cuda_include_dir;
  std::uint64_t seed = 0;
  // The arch to compile for while the worker is still asking the GPU for its own (the parent's
  // last-seen arch); a wrong guess only costs a second compile.
  std::string arch_guess = "sm_90";
  std::size_t max_log_bytes = kDefaultLimits.max_compile_log_bytes;
  WorkerMode mode = WorkerMode::kCheck;
  std::int64_t tool_size = kDefaultLimits.sanitize_size;
  // Check mode: profile the reference and a correct submission with CUPTI after timing.
  bool profile = true;
  // Check mode: the profile is not made here but by the GPU's profiling process, which the parent
  // runs when this worker sends await_profile (after timing, still holding the GPU alone).
  bool profile_elsewhere = false;
  int profiler_max_passes = kDefaultLimits.profiler_max_passes;
  // SM throughput too: it takes most of the profiler's passes, so only where a gate reads it or the
  // caller asks (CheckRequest::all_metrics).
  bool profile_sm_throughput = true;
  double profiler_setup_wait_ms = kDefaultLimits.profiler_setup_wait_ms;
  // The submission's language. CUDA C++ arrives as source and the worker compiles it; Python and
  // Rust arrive already compiled (by the parent's front end, or `cudojo build`) as
  // submission_build and counted_build.
  Language language = Language::kCuda;
  std::optional<BuiltKernel> submission_build;
  std::optional<BuiltKernel> reference_build;
  // The barrier check's build of the submission (check mode); without it a CUDA source is
  // compiled again with the counting header.
  std::optional<BuiltKernel> counted_build;
  // A two-kernel contract's second kernel (stage.second_kernel), built on its own: the learner's
  // (Python and Rust arrive compiled, CUDA is compiled in the worker unless given) and the
  // reference's (given to the tool workers).
  std::optional<BuiltKernel> second_submission_build;
  std::optional<BuiltKernel> second_reference_build;
  // After the result, settle the GPU and wait for another job instead of ending (a server's warm
  // workers); the worker ends anyway after a job that was not clean (run/worker.cc says which).
  bool keep_alive = false;
  // kLaunchForNcu: launch the submission alone (its hot spots), not the reference before it.
  bool launch_submission_only = false;
  // Other jobs share the GPU (a server's slots): ask for a turn on it before any work there, alone
  // around each shared-memory planting, and give it back whenever the work has drained.
  bool gpu_turns = false;
  // The calibration folder (gate/calibration.h): the reference's time per launch, which sets the
  // phases' budgets, is read from this GPU's calibration when it has the stage at its size.
  std::string calibration_dir;
};

// Binary images in JSON (cubins, between processes).
std::string encode_base64(const std::vector<char>& bytes);
std::vector<char> decode_base64(const std::string& text);

void to_json(nlohmann::json& j, const BuiltKernel& kernel);
void from_json(const nlohmann::json& j, BuiltKernel& kernel);

void to_json(nlohmann::json& j, const Job& job);
void from_json(const nlohmann::json& j, Job& job);

// What the worker says ended its run (the parent turns this into a verdict).
namespace outcome {
inline constexpr const char* kCompleted = "completed";
inline constexpr const char* kCompileError = "compile_error";
inline constexpr const char* kNoDevice = "no_device";
inline constexpr const char* kRuntimeError = "runtime_error";
inline constexpr const char* kInternalError = "internal_error";
}  // namespace outcome

// The parent's answer to await_gpu and to a gpu_turn that waits.
inline constexpr const char* kGpuGrantEvent = "gpu";
inline constexpr const char* kGpuTurnEvent = "gpu_turn";
inline constexpr const char* kIdleEvent = "idle";
inline constexpr const char* kAwaitProfileEvent = "await_profile";

// Entry point of `cudojo worker [MODE]`: starts CUDA at once, then reads a Job on stdin and writes
// messages to fd 3. Returns the process exit code (0 whenever a result was sent, whatever the
// verdict).
int worker_main(std::string_view mode_hint);

}  // namespace cudojo

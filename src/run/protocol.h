// The small JSON protocol between the parent and a worker.
//
// parent -> worker stdin: one Job.
// worker -> parent fd 3, one JSON object per line, in this order:
//   {"event":"compiled","compile":{...},"builds":{...}}           once, after both compiles
//   {"event":"reference_time","ms":0.0123}                       once the reference has been timed
//   {"event":"phase","name":"tests","launches":96}               before each phase that runs learner code
//   {"event":"result","outcome":"completed"|..., "report":{...}}  last
// The worker is passive: it never decides a verdict, and the parent never trusts a message to be
// well-formed (a malformed line is the judge's own failure, internal_error).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stage/stage.h"

namespace cudojo {

// A kernel already compiled for this GPU: the check worker sends the parent its builds before any
// learner code runs, and the later workers of the same check (sanitizers, profiler) load them
// instead of compiling again; a source that includes CUB or cooperative groups costs about a
// second per compile.
struct BuiltKernel {
  std::string lowered_name;
  std::vector<char> cubin;
};

struct Job {
  Stage stage;  // without lesson text; sources below
  std::string source;
  std::string file_name;
  std::string reference_source;
  std::optional<std::string> arch;  // override; default: the GPU's own
  std::string cuda_include_dir;
  std::uint64_t seed = 0;
  std::size_t max_source_bytes = 64 * 1024;
  std::size_t max_log_bytes = 32 * 1024;
  // "check": the full run. "sanitize": compile, then one launch of the submission at
  // tool_size with exactly-sized buffers, for compute-sanitizer to watch. "profile": one launch
  // of the reference, then one of the submission, at the performance size, measured with CUPTI
  // unless use_cupti is false (then ncu, wrapped around the worker, measures them).
  std::string mode = "check";
  std::int64_t tool_size = 1000;
  bool use_cupti = true;
  std::optional<BuiltKernel> submission_build;
  std::optional<BuiltKernel> reference_build;
};

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

// Entry point of `cudojo worker`: reads a Job on stdin, writes messages to fd 3. Returns the
// process exit code (0 whenever a result was sent, whatever the verdict).
int worker_main();

}  // namespace cudojo

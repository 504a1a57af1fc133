// The Python and Rust front ends: the learner's file becomes PTX on the host, CPU only, inside the
// sandbox (compile/sandbox.h). Each front end is a script shipped inside the cudojo binary
// (numba_frontend.py, rust_frontend.py and the Rust device prelude, embedded at build time) and
// speaks the JSON protocol of src/compile/frontends/PROTOCOL.md. The result is a CompileResult like
// NVRTC's: PTX instead of a cubin, the parameter ABI, and diagnostics at the learner's lines.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>

#include "compile/nvrtc_compiler.h"
#include "compile/sandbox.h"
#include "stage/contract_info.h"
#include "stage/language.h"

namespace cudojo {

struct FrontendRequest {
  Language language = Language::kPython;
  std::string source;
  std::string file_name = "submission.py";  // as the learner's diagnostics will name it
  std::string kernel_name;
  std::span<const KernelParameter> parameters;
  std::string arch = "sm_90";
  std::string cuda_home;  // empty: the toolkit around default_cuda_include_dir()
  std::chrono::milliseconds time_limit{60000};
  std::uint64_t memory_bytes = kDefaultLimits.frontend_memory_bytes;
  int max_processes = kDefaultLimits.frontend_max_processes;
  // The front end's answer (its PTX, as JSON): more is the learner's file producing too much code.
  std::size_t max_answer_bytes = kDefaultLimits.frontend_max_answer_bytes;
  std::size_t max_log_bytes = kDefaultLimits.max_compile_log_bytes;
};

// A compile error is a result with ok = false and diagnostics; a failure of the judge's own (no
// sandbox, a front end that answered nothing) sets judge_failure with the reason in `log`.
struct FrontendResult {
  CompileResult compile;
  bool judge_failure = false;
};

FrontendResult compile_with_frontend(const FrontendRequest& request);

// What the parent makes of the front end's finished run (compile_with_frontend's last step, apart
// for tests). The learner's module runs in the sandbox, so what it printed is theirs to shape: the
// answer is read within bounds (its size before parsing, its nesting, each field's type and range,
// an entry the PTX declares) and one that does not fit is the learner's compile error, in a
// sentence, never the judge's crash. Only a well-formed answer that says "internal" is the judge's.
FrontendResult read_frontend_answer(const FrontendRequest& request, const SandboxResult& ran);

// The nvptx sysroot (Rust's `core` built for `arch`), built on first use and cached per machine in
// $CUDOJO_CACHE_DIR, else $XDG_CACHE_HOME/cudojo, else ~/.cache/cudojo. Returns its folder, or
// nullopt with the reason in `error`.
std::optional<std::string> prepare_rust_sysroot(const std::string& arch, std::string& error);

// The toolkit folder (holding include/, bin/, nvvm/) that default_cuda_include_dir() lives in.
std::string default_cuda_home();

}  // namespace cudojo

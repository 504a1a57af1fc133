// A submission compiled for one GPU architecture, apart from running it: what `cudojo build`
// writes (on any machine, CPU only) and `cudojo check --build` runs (on the GPU machine, which
// then needs neither Python, Numba nor rustc), and what the parent makes of a Python or Rust
// submission before its job reaches the worker. CUDA C++ builds hold NVRTC cubins; Python and
// Rust builds hold PTX, which the driver compiles when it loads it.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "common/limits.h"
#include "report/report.h"
#include "run/protocol.h"
#include "stage/language.h"
#include "stage/stage.h"

namespace cudojo {

struct SubmissionBuild {
  std::string stage;  // the stage id it was built for
  Language language = Language::kCuda;
  std::string file_name;
  std::string source;                     // kept so reports can quote the learner's lines
  CompileInfo compile;                    // ok, arch, compiler, log, diagnostics, compile_ms
  std::optional<BuiltKernel> submission;  // when compile.ok
  std::optional<BuiltKernel> counted;     // the barrier check's build, when it could be made
  std::optional<BuiltKernel> second;      // a two-kernel stage's second kernel, built on its own
  std::string counted_note;               // why there is no counted build
  // The modules' PTX (NVRTC's, or the front end's), for `cudojo asm`; not kept in a build file.
  std::string ptx, second_ptx;
};

struct BuildRequest {
  const Stage* stage = nullptr;
  Language language = Language::kCuda;
  std::string source;
  std::string file_name;
  std::string arch = "sm_90";
  std::string cuda_include_dir;
  JudgeLimits limits = kDefaultLimits;
};

// A compile error is a build with compile.ok == false; a failure of the judge's own (no sandbox,
// no Python) throws std::runtime_error.
SubmissionBuild build_submission(const BuildRequest& request);

void to_json(nlohmann::json& j, const SubmissionBuild& build);
// Throws std::runtime_error naming what is wrong with a file that is not a cudojo build.
void from_json(const nlohmann::json& j, SubmissionBuild& build);

}  // namespace cudojo

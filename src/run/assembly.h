// What a submission becomes on the machine, without a GPU (issue #28): for each of its kernels and
// the stage's reference, the resources ptxas reports and the occupancy of the stage's launch; the
// learner's PTX and SASS, each line tied to the source line it came from. `cudojo asm` prints it
// and the server's /api/assembly returns it; both take the learner's source as the judge does.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "compile/kernel_resources.h"
#include "compile/sass_listing.h"
#include "report/report.h"
#include "stage/language.h"
#include "stage/stage.h"

namespace cudojo {

struct AssemblyRequest {
  const Stage* stage = nullptr;
  Language language = Language::kCuda;
  std::string source;
  std::string file_name;
  std::string arch = "sm_90";
  bool ptx = false;   // include the learner's PTX
  bool sass = false;  // include the learner's SASS (needs nvdisasm)
  JudgeLimits limits = kDefaultLimits;
};

// One kernel's row: whose, its entry, what ptxas reported, and the launch's occupancy.
struct AssemblyKernel {
  std::string whose;  // "yours" or "reference"
  std::string entry;  // the kernel's name as the stage gives it
  std::optional<KernelResources> resources;
  std::optional<Occupancy> occupancy;
  std::string note;  // why a figure is missing
};

struct PtxLine {
  unsigned line = 0;  // the learner's source line, 0 when none
  std::string text;
};

struct AssemblyView {
  std::string stage, arch;
  Language language = Language::kCuda;
  int threads_per_block = 0;
  std::int64_t dynamic_shared_bytes = 0;
  CompileInfo compile;  // the learner's compile: when !compile.ok, nothing else is filled
  std::vector<AssemblyKernel> kernels;
  std::vector<PtxLine> ptx;  // the first kernel's module, when asked
  std::vector<SassFunction> sass;
  std::string sass_note;  // why there is no SASS, when asked and there is none
};

// ptxas and nvdisasm are found as the judge finds its other CUDA tools (run/tools.h), each named
// by an environment variable (CUDOJO_PTXAS, CUDOJO_NVDISASM). Throws std::runtime_error when
// ptxas is missing (nothing can be shown), or the judge's own compile fails (no sandbox).
AssemblyView view_assembly(const AssemblyRequest& request);

// The schema of docs/verdicts.md ("cudojo asm --json").
void to_json(nlohmann::json& j, const AssemblyView& view);

}  // namespace cudojo

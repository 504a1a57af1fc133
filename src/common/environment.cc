#include "common/environment.h"

#include <array>

namespace cudojo {

std::span<const EnvironmentVariable> environment_variables() {
  static constexpr std::array kVariables = {
      EnvironmentVariable{env::kCourse,
                          "course folder (default: the course shipped with the build); --course wins"},
      EnvironmentVariable{env::kCalibration,
                          "folder of per-GPU reference figures (default: calibration/ beside the course)"},
      EnvironmentVariable{env::kData, "serve: folder of the SQLite database (default: ./cudojo-data)"},
      EnvironmentVariable{env::kWeb, "serve: folder of the page's files (default: web/ of the source tree)"},
      EnvironmentVariable{env::kStore,
                          "serve: the store, as --store takes it (keeps a URL with a password out of `ps`); "
                          "--store wins"},
      EnvironmentVariable{env::kCudaInclude,
                          "CUDA include folder NVRTC compiles against (default: the toolkit's)"},
      EnvironmentVariable{env::kComputeSanitizer,
                          "compute-sanitizer to run (default: PATH, then /usr/local/cuda/bin)"},
      EnvironmentVariable{env::kNcu, "ncu to run when CUPTI fails (default: PATH, then /usr/local/cuda/bin)"},
      EnvironmentVariable{env::kPtxas, "asm: ptxas to run (default: PATH, then /usr/local/cuda/bin)"},
      EnvironmentVariable{env::kNvdisasm,
                          "asm --sass: nvdisasm to run (default: PATH, then /usr/local/cuda/bin)"},
      EnvironmentVariable{env::kProfiler,
                          "'ncu' skips CUPTI and measures with ncu (how the two are compared)"},
      EnvironmentVariable{env::kKeepSanitizerLogs, "a folder: keep every raw compute-sanitizer log there"},
      EnvironmentVariable{env::kNoColor, "set and not empty: no colour in the text report"},
      EnvironmentVariable{env::kJudgePid,
                          "set by cudojo for workers run under compute-sanitizer or ncu: they end when that "
                          "process does"},
      EnvironmentVariable{env::kToolName, "set by cudojo for a sanitizer's worker: which tool watches it"},
      EnvironmentVariable{
          env::kToolMark,
          "set by cudojo for a kept sanitizer's worker: what ends each job in the tool's log"},
  };
  return kVariables;
}

}  // namespace cudojo

#include "measure/cupti_library.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>

namespace cudojo {

namespace {

template <typename Fn>
void resolve(Cupti& cupti, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(cupti.handle, name));
  if (!fn) throw CuptiFailure(fmt::format("libcupti has no {}", name));
}

}  // namespace

Cupti load_cupti() {
  Cupti cupti;
  for (const char* name : {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so.13",
                           "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"}) {
    cupti.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (cupti.handle) break;
  }
  if (!cupti.handle) throw CuptiFailure(fmt::format("libcupti could not be loaded ({})", dlerror()));
#define CUDOJO_RESOLVE(name) resolve(cupti, cupti.name, #name)
  CUDOJO_RESOLVE(cuptiProfilerInitialize);
  CUDOJO_RESOLVE(cuptiDeviceGetChipName);
  CUDOJO_RESOLVE(cuptiProfilerGetCounterAvailability);
  CUDOJO_RESOLVE(cuptiProfilerHostInitialize);
  CUDOJO_RESOLVE(cuptiProfilerHostDeinitialize);
  CUDOJO_RESOLVE(cuptiProfilerHostConfigAddMetrics);
  CUDOJO_RESOLVE(cuptiProfilerHostGetConfigImageSize);
  CUDOJO_RESOLVE(cuptiProfilerHostGetConfigImage);
  CUDOJO_RESOLVE(cuptiProfilerHostEvaluateToGpuValues);
  CUDOJO_RESOLVE(cuptiRangeProfilerEnable);
  CUDOJO_RESOLVE(cuptiRangeProfilerDisable);
  CUDOJO_RESOLVE(cuptiRangeProfilerGetCounterDataSize);
  CUDOJO_RESOLVE(cuptiRangeProfilerCounterDataImageInitialize);
  CUDOJO_RESOLVE(cuptiRangeProfilerSetConfig);
  CUDOJO_RESOLVE(cuptiRangeProfilerStart);
  CUDOJO_RESOLVE(cuptiRangeProfilerStop);
  CUDOJO_RESOLVE(cuptiRangeProfilerDecodeData);
  CUDOJO_RESOLVE(cuptiRangeProfilerGetCounterDataInfo);
  CUDOJO_RESOLVE(cuptiGetResultString);
#undef CUDOJO_RESOLVE
  return cupti;
}

void check_cupti(const Cupti& cupti, CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = "unknown";
  if (cupti.cuptiGetResultString) cupti.cuptiGetResultString(result, &text);
  throw CuptiFailure(fmt::format("{} failed: {}", call, text));
}

CUcontext current_context() {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &status) !=
          cudaSuccess ||
      !entry) {
    throw CuptiFailure("cuCtxGetCurrent is not available from the driver");
  }
  CUcontext context = nullptr;
  reinterpret_cast<CUresult (*)(CUcontext*)>(entry)(&context);
  if (!context) throw CuptiFailure("no current CUDA context");
  return context;
}

}  // namespace cudojo

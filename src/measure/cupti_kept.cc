#include "measure/cupti_kept.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include "measure/profiler.h"

namespace cudojo::cupti_kept {

using namespace profiler_metric;

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

void check(const Cupti& cupti, CUptiResult result, const char* call) {
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

KeptCupti& kept_cupti() {
  static KeptCupti* kept = new KeptCupti;  // never destroyed: CUPTI may be unloaded first at exit
  return *kept;
}

std::vector<std::string> cupti_spellings(std::size_t metric) {
  std::vector<std::string> spellings = {profiler_metric_names()[metric]};
  if (metric == kRed) spellings.push_back("smsp__sass_inst_executed_op_global_red.sum");
  if (metric == kAtom) spellings.push_back("smsp__sass_inst_executed_op_global_atom.sum");
  return spellings;
}

void read_availability(KeptCupti& kept, int device, CUcontext context) {
  const Cupti& cupti = kept.cupti;
  CUpti_Profiler_Initialize_Params initialize{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUDOJO_CUPTI(cupti, cuptiProfilerInitialize, initialize);
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  CUDOJO_CUPTI(cupti, cuptiDeviceGetChipName, chip);
  CUpti_Profiler_GetCounterAvailability_Params availability{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  availability.ctx = context;
  CUDOJO_CUPTI(cupti, cuptiProfilerGetCounterAvailability, availability);
  std::vector<uint8_t> image(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = image.data();
  CUDOJO_CUPTI(cupti, cuptiProfilerGetCounterAvailability, availability);
  kept.chip = chip.pChipName;
  kept.availability = std::move(image);
  kept.context = context;
}

HostSide build_host_side(const KeptCupti& kept, bool sm_throughput) {
  const Cupti& cupti = kept.cupti;
  HostSide side;
  CUpti_Profiler_Host_Initialize_Params host_init{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host_init.pChipName = kept.chip.c_str();
  host_init.pCounterAvailabilityImage = kept.availability.data();
  CUDOJO_CUPTI(cupti, cuptiProfilerHostInitialize, host_init);
  side.host = host_init.pHostObject;

  // Metrics are added one at a time, so one this CUPTI cannot collect costs only itself; its
  // value stays NaN and the error names it.
  for (std::size_t m = sm_throughput ? 0 : 1; m < profiler_metric_names().size(); ++m) {
    CUptiResult added = CUPTI_ERROR_UNKNOWN;
    for (const auto& spelling : cupti_spellings(m)) {
      const char* name = spelling.c_str();
      CUpti_Profiler_Host_ConfigAddMetrics_Params add{
          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
      add.pHostObject = side.host;
      add.ppMetricNames = &name;
      add.numMetrics = 1;
      added = cupti.cuptiProfilerHostConfigAddMetrics(&add);
      if (added == CUPTI_SUCCESS) {
        side.spellings.push_back(spelling);
        side.indices.push_back(static_cast<int>(m));
        break;
      }
    }
    if (added != CUPTI_SUCCESS) {
      const char* text = "unknown";
      cupti.cuptiGetResultString(added, &text);
      side.refused +=
          fmt::format("{}{} ({})", side.refused.empty() ? "" : ", ", profiler_metric_names()[m], text);
    }
  }
  if (side.spellings.empty()) {
    CUpti_Profiler_Host_Deinitialize_Params deinit{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    deinit.pHostObject = side.host;
    cupti.cuptiProfilerHostDeinitialize(&deinit);
    throw CuptiFailure("the range profiler accepted none of the metrics: " + side.refused);
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params config_size{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  config_size.pHostObject = side.host;
  CUDOJO_CUPTI(cupti, cuptiProfilerHostGetConfigImageSize, config_size);
  side.config.resize(config_size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params config_image{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  config_image.pHostObject = side.host;
  config_image.configImageSize = side.config.size();
  config_image.pConfigImage = side.config.data();
  CUDOJO_CUPTI(cupti, cuptiProfilerHostGetConfigImage, config_image);
  return side;
}

}  // namespace cudojo::cupti_kept

// The CUPTI entry points the profiler uses, resolved from libcupti at run time (so cudojo still
// starts where CUPTI is missing), and the small helpers around them. Internal to measure/: the
// profiler (measure/profiler.cc) is the only caller.
#pragma once

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <stdexcept>

namespace cudojo {

// The CUPTI entry points cudojo uses, resolved from libcupti at run time.
struct Cupti {
  void* handle = nullptr;
#define CUDOJO_CUPTI_FN(name, Params) CUptiResult (*name)(Params*) = nullptr;
  CUDOJO_CUPTI_FN(cuptiProfilerInitialize, CUpti_Profiler_Initialize_Params)
  CUDOJO_CUPTI_FN(cuptiDeviceGetChipName, CUpti_Device_GetChipName_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerGetCounterAvailability, CUpti_Profiler_GetCounterAvailability_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerHostInitialize, CUpti_Profiler_Host_Initialize_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerHostDeinitialize, CUpti_Profiler_Host_Deinitialize_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerHostConfigAddMetrics, CUpti_Profiler_Host_ConfigAddMetrics_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerHostGetConfigImageSize, CUpti_Profiler_Host_GetConfigImageSize_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerHostGetConfigImage, CUpti_Profiler_Host_GetConfigImage_Params)
  CUDOJO_CUPTI_FN(cuptiProfilerHostEvaluateToGpuValues, CUpti_Profiler_Host_EvaluateToGpuValues_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerEnable, CUpti_RangeProfiler_Enable_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerDisable, CUpti_RangeProfiler_Disable_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerGetCounterDataSize, CUpti_RangeProfiler_GetCounterDataSize_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerCounterDataImageInitialize,
                  CUpti_RangeProfiler_CounterDataImage_Initialize_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerSetConfig, CUpti_RangeProfiler_SetConfig_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerStart, CUpti_RangeProfiler_Start_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerStop, CUpti_RangeProfiler_Stop_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerDecodeData, CUpti_RangeProfiler_DecodeData_Params)
  CUDOJO_CUPTI_FN(cuptiRangeProfilerGetCounterDataInfo, CUpti_RangeProfiler_GetCounterDataInfo_Params)
#undef CUDOJO_CUPTI_FN
  CUptiResult (*cuptiGetResultString)(CUptiResult, const char**) = nullptr;
};

// A CUPTI call that failed, or a library that could not be used: the profile becomes a note.
class CuptiFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// dlopens libcupti (the toolkit's, or the one on the library path) and resolves every entry point.
Cupti load_cupti();

// Throws CuptiFailure naming `call` and CUPTI's own words when `result` is not success.
void check_cupti(const Cupti& cupti, CUptiResult result, const char* call);

#define CUDOJO_CUPTI(cupti, call, params) check_cupti(cupti, cupti.call(&params), #call)

// The calling thread's CUDA context, through the driver entry point the runtime hands out.
CUcontext current_context();

}  // namespace cudojo

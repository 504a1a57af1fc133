// CUPTI as the profiler uses it (measure/profiler.cc), kept per process between profiles: the
// library's entry points resolved at run time, the chip's counter availability, the host side of
// each metric configuration, and a range profiler a warm-up left enabled. Internal to measure/.
#pragma once

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudojo::cupti_kept {

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

class CuptiFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Cupti load_cupti();

// Throws CuptiFailure naming the call when `result` is not success.
void check(const Cupti& cupti, CUptiResult result, const char* call);
#define CUDOJO_CUPTI(cupti, call, params) check(cupti, cupti.call(&params), #call)

// The calling thread's current context (the runtime's primary one once it is made).
CUcontext current_context();

// What this process keeps of CUPTI between profiles (a warm worker's jobs): the library, the
// chip's counter availability and the host side of each configuration (the metric tables and the
// configuration image: 100-180 ms of CPU per profile, and the availability query fails with
// CUPTI_ERROR_HARDWARE_BUSY while another process profiles, which cost a retry with the GPU alone).
// The range profiler itself is enabled for each profile (or by a warm-up just before it) and
// disabled after it: one kept enabled makes every other process's profile fail with
// CUPTI_ERROR_HARDWARE_BUSY, so several workers on one GPU cannot each keep one
// (evidence/2026-12-03-h200-cupti-session-cost.txt, and the burst in -judge-scale-kept-enabled.txt where that
// was tried). None of it holds a job's data: each profile has a counter data image of its own. After any
// failure of a profile all of it is let go.
struct HostSide {
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<uint8_t> config;
  std::vector<std::string> spellings;  // the names CUPTI accepted
  std::vector<int> indices;            // each one's position in profiler_metric_names()
  std::string refused;                 // the metrics it did not accept, and why
};

struct KeptCupti {
  std::mutex mutex;  // one profile at a time in a process
  Cupti cupti;
  bool loaded = false;
  CUcontext context = nullptr;          // the context the availability was read on
  std::string chip;                     // its chip's name
  std::vector<uint8_t> availability;    // its counter availability image
  std::map<bool, HostSide> host_sides;  // by "with SM throughput"
  // A range profiler a warm-up enabled on `context` (warm_up_range_profiler); the next profile uses
  // it and disables it.
  CUpti_RangeProfiler_Object* enabled = nullptr;
  double warm_up_ms = 0;

  // Disables the profiler a warm-up left enabled, if any.
  void disable_enabled() {
    if (!enabled || !cupti.cuptiRangeProfilerDisable) return;
    CUpti_RangeProfiler_Disable_Params disable{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    disable.pRangeProfilerObject = enabled;
    cupti.cuptiRangeProfilerDisable(&disable);
    enabled = nullptr;
  }

  void let_go() {
    disable_enabled();
    context = nullptr;
    chip.clear();
    availability.clear();
    for (auto& [sm, side] : host_sides) {
      if (!side.host || !cupti.cuptiProfilerHostDeinitialize) continue;
      CUpti_Profiler_Host_Deinitialize_Params params{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      params.pHostObject = side.host;
      cupti.cuptiProfilerHostDeinitialize(&params);
    }
    host_sides.clear();
  }
};

// The process's one KeptCupti, never destroyed (CUPTI may be unloaded first at exit).
KeptCupti& kept_cupti();

// The chip's name and counter availability, read once per context.
void read_availability(KeptCupti& kept, int device, CUcontext context);
// The host side of one configuration: the chip's metric tables and the configuration image.
HostSide build_host_side(const KeptCupti& kept, bool sm_throughput);
// The names CUPTI may know a metric by (profiler_metric::Index), the shared one first.
std::vector<std::string> cupti_spellings(std::size_t metric);

}  // namespace cudojo::cupti_kept

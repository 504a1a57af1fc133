#include "measure/profiler.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_number.h"
#include "measure/cupti_kept.h"

namespace cudojo {

using namespace profiler_metric;
using namespace cupti_kept;

namespace {

double ms_since(std::chrono::steady_clock::time_point from) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from).count();
}

// CUPTI loaded, and what was read on another context let go: returns the current context.
CUcontext kept_for_this_context(KeptCupti& kept, int device) {
  if (!kept.loaded) {
    kept.cupti = load_cupti();
    kept.loaded = true;
  }
  if (cudaFree(nullptr) != cudaSuccess) throw CuptiFailure("no CUDA context");
  const CUcontext context = current_context();
  if (kept.context != context) {  // a new context: nothing read on the old one holds
    kept.let_go();
    read_availability(kept, device, context);
  }
  return context;
}

const HostSide& host_side(KeptCupti& kept, bool sm_throughput) {
  auto found = kept.host_sides.find(sm_throughput);
  if (found == kept.host_sides.end())
    found = kept.host_sides.emplace(sm_throughput, build_host_side(kept, sm_throughput)).first;
  return found->second;
}

// A counter data image for `names`, and the configuration set on `profiler` with it: automatic
// ranges (one per kernel launch, so a range is exactly one kernel's duration) with user replay (the
// judge, not CUPTI, replays the launches, so it can flush the L2 right before each one; kernel
// replay restores memory between passes and leaves the input cached, so DRAM throughput would read
// near zero; user ranges would add the launch gap to the range).
std::vector<uint8_t> set_config(const Cupti& cupti, CUpti_RangeProfiler_Object* profiler,
                                const HostSide& side, std::vector<const char*>& names,
                                std::size_t max_ranges) {
  CUpti_RangeProfiler_GetCounterDataSize_Params data_size{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  data_size.pRangeProfilerObject = profiler;
  data_size.pMetricNames = names.data();
  data_size.numMetrics = names.size();
  data_size.maxNumOfRanges = max_ranges;
  data_size.maxNumRangeTreeNodes = max_ranges;
  CUDOJO_CUPTI(cupti, cuptiRangeProfilerGetCounterDataSize, data_size);
  std::vector<uint8_t> counter_data(data_size.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params data_init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  data_init.pRangeProfilerObject = profiler;
  data_init.counterDataSize = counter_data.size();
  data_init.pCounterData = counter_data.data();
  CUDOJO_CUPTI(cupti, cuptiRangeProfilerCounterDataImageInitialize, data_init);

  CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = profiler;
  set.configSize = side.config.size();
  set.pConfig = side.config.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = max_ranges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  CUDOJO_CUPTI(cupti, cuptiRangeProfilerSetConfig, set);
  return counter_data;
}

CUpti_RangeProfiler_Object* enable_range_profiler(const Cupti& cupti, CUcontext context) {
  CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = context;
  CUDOJO_CUPTI(cupti, cuptiRangeProfilerEnable, enable);
  return enable.pRangeProfilerObject;
}

}  // namespace

ProfilerWarmUp warm_up_range_profiler(int device, const std::function<void()>& launch_empty) {
  const auto started = std::chrono::steady_clock::now();
  ProfilerWarmUp warm;
  KeptCupti& kept = kept_cupti();
  std::lock_guard lock(kept.mutex);
  CUpti_RangeProfiler_Object* profiler = nullptr;
  try {
    const CUcontext context = kept_for_this_context(kept, device);
    if (!kept.enabled) {
      const Cupti& cupti = kept.cupti;
      const HostSide& side = host_side(kept, false);
      std::vector<const char*> names;
      for (const auto& spelling : side.spellings) names.push_back(spelling.c_str());
      profiler = enable_range_profiler(cupti, context);
      std::vector<uint8_t> counter_data = set_config(cupti, profiler, side, names, 2);
      // Every pass of a whole profile, so the profiler is left as a finished profile leaves it.
      constexpr int kMostPasses = 16;
      for (int passes = 1;; ++passes) {
        if (passes > kMostPasses) throw CuptiFailure(fmt::format("more than {} passes", kMostPasses));
        CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
        start.pRangeProfilerObject = profiler;
        CUDOJO_CUPTI(cupti, cuptiRangeProfilerStart, start);
        launch_empty();
        if (cudaDeviceSynchronize() != cudaSuccess) throw CuptiFailure("the warm-up's empty kernel failed");
        CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
        stop.pRangeProfilerObject = profiler;
        CUDOJO_CUPTI(cupti, cuptiRangeProfilerStop, stop);
        if (stop.isAllPassSubmitted) break;
      }
      CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
      decode.pRangeProfilerObject = profiler;
      CUDOJO_CUPTI(cupti, cuptiRangeProfilerDecodeData, decode);
      kept.enabled = profiler;
      profiler = nullptr;
      kept.warm_up_ms = ms_since(started);
    }
    warm.ok = true;
  } catch (const std::exception& error) {
    warm.error = error.what();
    if (profiler) {
      CUpti_RangeProfiler_Disable_Params disable{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      disable.pRangeProfilerObject = profiler;
      kept.cupti.cuptiRangeProfilerDisable(&disable);
    }
  }
  warm.ms = ms_since(started);
  return warm;
}

void disable_warmed_range_profiler() {
  KeptCupti& kept = kept_cupti();
  std::lock_guard lock(kept.mutex);
  kept.disable_enabled();
}

bool range_profiler_warmed_up() {
  KeptCupti& kept = kept_cupti();
  std::lock_guard lock(kept.mutex);
  return kept.enabled != nullptr;
}

bool profiler_set_up_here() {
  KeptCupti& kept = kept_cupti();
  std::lock_guard lock(kept.mutex);
  return kept.loaded && kept.context && kept.host_sides.count(false) > 0;
}

ProfileResult profile_with_cupti(int device, const std::vector<ProfiledLaunch>& launches,
                                 const std::function<void()>& flush_l2, int max_passes,
                                 const std::function<bool()>& ready_for_passes, bool sm_throughput,
                                 const std::function<bool()>& ready_for_launches) {
  const auto started = std::chrono::steady_clock::now();
  ProfileResult result;
  result.source = "cupti";
  KeptCupti& kept = kept_cupti();
  std::unique_lock lock(kept.mutex);
  const Cupti& cupti = kept.cupti;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  bool pass_open = false;      // a pass started and not stopped
  bool not_wanted = false;     // the check ended before the launches: nothing went wrong
  bool session_begun = false;  // from here a failure lets go of what is kept
  try {
    CUcontext context = kept_for_this_context(kept, device);
    result.host_side_kept = kept.host_sides.count(sm_throughput) > 0;
    host_side(kept, sm_throughput);
    result.setup_ms = ms_since(started);
    if (ready_for_passes) {
      // The lock is let go meanwhile: the worker warms the profiler up while this waits.
      lock.unlock();
      const bool go = ready_for_passes();
      lock.lock();
      if (!go) throw CuptiFailure("not wanted (the kernel was not measured)");
      context = kept_for_this_context(kept, device);
    }
    const HostSide& side = host_side(kept, sm_throughput);
    std::vector<const char*> names;
    for (const auto& spelling : side.spellings) names.push_back(spelling.c_str());
    const std::vector<int>& indices = side.indices;
    result.error = side.refused.empty() ? "" : "not collected by CUPTI: " + side.refused;
    const auto passes_started = std::chrono::steady_clock::now();
    session_begun = true;
    if (kept.enabled) {  // a warm-up enabled it and paid its first start
      profiler = kept.enabled;
      kept.enabled = nullptr;
      result.warmed_up = true;
      result.warm_up_ms = kept.warm_up_ms;
    } else {
      profiler = enable_range_profiler(cupti, context);
    }
    constexpr size_t kMaxRanges = 16;
    std::vector<uint8_t> counter_data = set_config(cupti, profiler, side, names, kMaxRanges);

    result.enable_ms = ms_since(passes_started);
    int passes = 0;
    LaunchMarks marks;
    marks.before = [&] {
      flush_l2();
      if (cudaDeviceSynchronize() != cudaSuccess) throw CuptiFailure("flushing the L2 failed");
    };
    for (bool all_submitted = false; !all_submitted;) {
      if (++passes > max_passes) throw CuptiFailure(fmt::format("more than {} replay passes", max_passes));
      const auto pass_started = std::chrono::steady_clock::now();
      CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      start.pRangeProfilerObject = profiler;
      CUDOJO_CUPTI(cupti, cuptiRangeProfilerStart, start);
      pass_open = true;
      if (passes == 1 && ready_for_launches) {
        // The first start is the long one; the launches wait for the GPU alone. The lock is let go
        // meanwhile, as above.
        lock.unlock();
        const bool go = ready_for_launches();
        lock.lock();
        if (!go) {
          not_wanted = true;
          throw CuptiFailure("not wanted (the kernel was not measured)");
        }
        result.first_start_ms = ms_since(pass_started);
      }
      const auto launches_started = std::chrono::steady_clock::now();
      for (const auto& launch : launches) launch(marks);
      if (cudaDeviceSynchronize() != cudaSuccess) throw CuptiFailure("a profiled kernel failed");
      if (passes == 1) {
        result.first_launches_ms = ms_since(launches_started);
        result.first_pass_ms = ms_since(pass_started) - result.first_start_ms;
      }
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = profiler;
      pass_open = false;
      CUDOJO_CUPTI(cupti, cuptiRangeProfilerStop, stop);
      all_submitted = stop.isAllPassSubmitted != 0;
    }
    result.passes = passes;
    result.passes_ms = ms_since(passes_started) - result.first_start_ms;
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = profiler;
    CUDOJO_CUPTI(cupti, cuptiRangeProfilerDecodeData, decode);

    CUpti_RangeProfiler_GetCounterDataInfo_Params info{
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    CUDOJO_CUPTI(cupti, cuptiRangeProfilerGetCounterDataInfo, info);
    // If the flush itself counted as a launch, every profiled kernel's range follows a flush's.
    std::size_t first = 0, stride = 1;
    if (info.numTotalRanges == 2 * launches.size()) {
      first = 1;
      stride = 2;
    } else if (info.numTotalRanges != launches.size()) {
      throw CuptiFailure(fmt::format("the range profiler recorded {} ranges for {} kernels",
                                     info.numTotalRanges, launches.size()));
    }
    for (size_t range = first; range < info.numTotalRanges; range += stride) {
      std::vector<double> values(names.size(), 0.0);
      CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
      evaluate.pHostObject = side.host;
      evaluate.pCounterDataImage = counter_data.data();
      evaluate.counterDataImageSize = counter_data.size();
      evaluate.rangeIndex = range;
      evaluate.ppMetricNames = names.data();
      evaluate.numMetrics = names.size();
      evaluate.pMetricValues = values.data();
      CUDOJO_CUPTI(cupti, cuptiProfilerHostEvaluateToGpuValues, evaluate);
      const double missing = std::numeric_limits<double>::quiet_NaN();
      std::vector<double> all(kMetricCount, missing);
      for (std::size_t k = 0; k < indices.size(); ++k) all[indices[k]] = values[k];
      // Atomics add up what was collected of red and atom; NaN only when neither was.
      const double atomics =
          std::isnan(all[kRed]) && std::isnan(all[kAtom])
              ? missing
              : (std::isnan(all[kRed]) ? 0 : all[kRed]) + (std::isnan(all[kAtom]) ? 0 : all[kAtom]);
      result.kernels.push_back({all[kSm], all[kDram], all[kDuration] / 1e6, atomics});
    }
    // SM throughput, when asked for, is what a gate reads: without it the collection has failed.
    const bool has_sm = !sm_throughput || std::find(indices.begin(), indices.end(), kSm) != indices.end();
    result.ok = !result.kernels.empty() && has_sm;
    if (result.kernels.empty()) result.error = "the CUPTI range profiler recorded no ranges";
    if (!has_sm) result.error = "CUPTI could not collect SM throughput; " + result.error;
  } catch (const std::exception& error) {
    result.ok = false;
    result.error = error.what();
  }
  if (profiler) {
    if (pass_open) {
      CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      stop.pRangeProfilerObject = profiler;
      cupti.cuptiRangeProfilerStop(&stop);
    }
    CUpti_RangeProfiler_Disable_Params disable{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    disable.pRangeProfilerObject = profiler;
    cupti.cuptiRangeProfilerDisable(&disable);
  }
  // After a failure in the session, whatever CUPTI was left holding, the next profile starts from
  // nothing. A profile not wanted (the check ended first) touched nothing kept.
  if (!result.ok && session_begun && !not_wanted) kept.let_go();
  return result;
}

}  // namespace cudojo

// The course's timing rules, as one procedure shared by every contract (and later the lab):
//   warm up each kernel (3 launches), then take samples until the StopRule is satisfied for both;
//   each sample resets the output and flushes L2 outside the timed region, and CUDA events
//   bracket exactly one launch. Submission and reference alternate sample by sample, so drift in
//   clocks or temperature lands on both.
#pragma once

#include <functional>
#include <optional>

#include "gpu/gpu.h"
#include "measure/stats.h"

namespace cudojo {

struct TimedKernel {
  std::function<void()> prepare;  // reset the output (and change the input); runs before the start event
  std::function<void()> launch;   // exactly one launch
  bool learner = false;           // faults in learner code become LearnerFault
  // Runs after every launch, warm-up included, outside the timed region: checks that launch's
  // result, so a kernel gains nothing from answering out of state it kept from an earlier launch.
  std::function<void()> verify;
};

struct InterleavedTimes {
  TimeStats submission;
  TimeStats reference;
  std::optional<TimeStats> baseline;  // when a baseline kernel took part
};

inline constexpr int kWarmupLaunches = 3;

// `baseline` (a library kernel such as CUB's, which some gates compare with) joins the rotation
// when given: reference, baseline, submission, sample after sample.
InterleavedTimes time_interleaved(GpuSession& gpu, const TimedKernel& submission,
                                  const TimedKernel& reference, StopRule::Settings settings = {},
                                  const TimedKernel* baseline = nullptr);

// Times one kernel alone (the reference, before anything else), to set the time limits.
TimeStats time_alone(GpuSession& gpu, const TimedKernel& kernel, int samples);

// Times one kernel alone, warm-up first, until the StopRule is satisfied (the lab's rows).
TimeStats time_until_stable(GpuSession& gpu, const TimedKernel& kernel, StopRule::Settings settings = {});

}  // namespace cudojo

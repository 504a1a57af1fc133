// What a worker does on the GPU for one job once its builds are loaded: the tool workers' one
// launch, or the check worker's reference time, tests, check build, timing and profile.
#pragma once

#include "gpu/gpu.h"
#include "report/report.h"
#include "run/protocol.h"
#include "run/worker_builds.h"
#include "run/worker_channel.h"

namespace cudojo {

// Runs the job's mode and sends its result. A learner's fault is thrown (LearnerFault, or a
// CudaError the caller tells apart), for the caller to report once.
// In check mode the submission (and a second kernel) get their planted builds attached.
void run_on_gpu(const Job& job, GpuSession& gpu, const Builds& builds, LoadedKernel& submission,
                StepClock& clock, Report& report);

}  // namespace cudojo

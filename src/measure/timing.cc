#include "measure/timing.h"

namespace cudojo {

namespace {

double sample(GpuSession& gpu, const TimedKernel& kernel) {
  auto prepare = [&] {
    kernel.prepare();
    gpu.flush_l2();
  };
  double ms = 0;
  if (!kernel.learner) {
    ms = gpu.time_once(prepare, kernel.launch);
  } else {
    try {
      ms = gpu.time_once(prepare, kernel.launch);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), std::string("while timing the submission: ") + error.what());
    }
  }
  if (kernel.verify) kernel.verify();
  return ms;
}

void warm_up(GpuSession& gpu, const TimedKernel& kernel) {
  for (int i = 0; i < kWarmupLaunches; ++i) sample(gpu, kernel);
}

}  // namespace

InterleavedTimes time_interleaved(GpuSession& gpu, const TimedKernel& submission,
                                  const TimedKernel& reference, StopRule::Settings settings,
                                  const TimedKernel* baseline) {
  warm_up(gpu, reference);
  if (baseline) warm_up(gpu, *baseline);
  warm_up(gpu, submission);
  StopRule submission_rule(settings), reference_rule(settings), baseline_rule(settings);
  while (!(submission_rule.done() && reference_rule.done() && (!baseline || baseline_rule.done()))) {
    reference_rule.add(sample(gpu, reference));
    if (baseline) baseline_rule.add(sample(gpu, *baseline));
    submission_rule.add(sample(gpu, submission));
  }
  InterleavedTimes times{summarize(submission_rule.samples()), summarize(reference_rule.samples()), {}};
  if (baseline) times.baseline = summarize(baseline_rule.samples());
  return times;
}

TimeStats time_until_stable(GpuSession& gpu, const TimedKernel& kernel, StopRule::Settings settings) {
  warm_up(gpu, kernel);
  StopRule rule(settings);
  while (!rule.done()) rule.add(sample(gpu, kernel));
  return summarize(rule.samples());
}

TimeStats time_alone(GpuSession& gpu, const TimedKernel& kernel, int samples) {
  warm_up(gpu, kernel);
  std::vector<double> times;
  for (int i = 0; i < samples; ++i) times.push_back(sample(gpu, kernel));
  return summarize(times);
}

}  // namespace cudojo

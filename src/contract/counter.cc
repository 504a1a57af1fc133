// The counter contract: `__global__ void NAME(int* c)` on a fixed grid; every thread adds one.
// Checked: the count equals blocks x threads on every one of stage.runs launches.
#include <fmt/format.h>

#include "check/findings.h"
#include "contract/driver.h"
#include "measure/timing.h"

namespace cudojo {

namespace {

class CounterDriver : public ContractDriver {
 public:
  double time_reference(ContractContext& context) override {
    allocate(context);
    TimeStats stats = time_alone(context.gpu, timed(context, context.reference, false), 5);
    return stats.median_ms;
  }

  void run_tests(ContractContext& context, ContractOutcome& outcome) override {
    allocate(context);
    const auto& launch = context.stage.launch;
    const std::int64_t expected = static_cast<std::int64_t>(*launch.fixed_blocks) * launch.threads_per_block;
    context.announce.phase("tests", context.stage.runs);
    std::vector<std::int64_t> counts;
    for (int run = 1; run <= context.stage.runs; ++run) {
      CUDOJO_CUDA(cudaMemsetAsync(counter_.get(), 0, sizeof(int), context.gpu.stream()));
      context.gpu.sync_judge();
      launch_kernel(context, context.submission, true);
      int count = 0;
      context.gpu.download(&count, counter_.get(), sizeof count);
      counts.push_back(count);
      outcome.tests.push_back(judge_count(run, expected, count));
    }
    add_count_findings(counts, expected, outcome.findings);
  }

  void measure(ContractContext& context, ContractOutcome& outcome) override {
    context.announce.phase("timing", 2 * (kWarmupLaunches + StopRule::Settings{}.max_samples));
    auto times = time_interleaved(context.gpu, timed(context, context.submission, true),
                                  timed(context, context.reference, false));
    outcome.submission_time = times.submission;
    outcome.reference_time = times.reference;
    outcome.timed_n = static_cast<std::int64_t>(*context.stage.launch.fixed_blocks) *
                      context.stage.launch.threads_per_block;
    outcome.bytes_read_per_launch = 0;
  }

  void launch_once_for_tools(ContractContext& context, std::int64_t, const LoadedKernel& kernel,
                             const LaunchMarks& marks) override {
    allocate(context);
    CUDOJO_CUDA(cudaMemsetAsync(counter_.get(), 0, sizeof(int), context.gpu.stream()));
    context.gpu.sync_judge();
    if (marks.before) marks.before();
    launch_kernel(context, kernel, &kernel == &context.submission);
  }

 private:
  void allocate(ContractContext&) {
    if (!counter_.get()) counter_ = DeviceBuffer<int>(1);
  }

  void launch_kernel(ContractContext& context, const LoadedKernel& kernel, bool learner) {
    const KernelArgument args[] = {KernelArgument::array(counter_.get(), 1, sizeof(int))};
    const auto& launch = context.stage.launch;
    try {
      kernel.launch(dim3(*launch.fixed_blocks), dim3(launch.threads_per_block), launch.dynamic_shared_bytes,
                    args, context.gpu.stream());
    } catch (const CudaError& error) {
      if (!learner) throw;
      throw LearnerFault(error.name(), std::string("launching the submission: ") + error.what());
    }
    if (learner) {
      context.gpu.sync_learner("the submission's launch");
    } else {
      context.gpu.sync_judge();
    }
  }

  TimedKernel timed(ContractContext& context, const LoadedKernel& kernel, bool learner) {
    const auto& launch = context.stage.launch;
    return TimedKernel{
        [this, &context] {
          CUDOJO_CUDA(cudaMemsetAsync(counter_.get(), 0, sizeof(int), context.gpu.stream()));
        },
        [this, &context, &kernel, launch] {
          const KernelArgument args[] = {KernelArgument::array(counter_.get(), 1, sizeof(int))};
          kernel.launch(dim3(*launch.fixed_blocks), dim3(launch.threads_per_block),
                        launch.dynamic_shared_bytes, args, context.gpu.stream());
        },
        learner};
  }

  DeviceBuffer<int> counter_;
};

}  // namespace

std::unique_ptr<ContractDriver> make_counter_driver() { return std::make_unique<CounterDriver>(); }

std::uint64_t case_seed(std::uint64_t run_seed, std::string_view data, std::int64_t n) {
  std::uint64_t hash = run_seed ^ 0x9E3779B97F4A7C15ull;
  for (char c : data) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  hash ^= static_cast<std::uint64_t>(n) * 0xBF58476D1CE4E5B9ull;
  return hash;
}

std::unique_ptr<ContractDriver> make_contract_driver(std::string_view contract) {
  if (contract == "counter") return make_counter_driver();
  if (contract == "one_accumulator") return make_float_sum_driver(false);
  if (contract == "partial_per_block") return make_float_sum_driver(true);
  throw std::runtime_error(fmt::format("no driver for contract '{}'", contract));
}

}  // namespace cudojo

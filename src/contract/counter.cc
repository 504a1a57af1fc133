// The counter contract: `__global__ void NAME(int* c)` on a fixed grid; every thread adds one.
// Checked: the counter grows by blocks x threads on every one of stage.runs launches. It never
// starts at zero (a kernel that writes the count instead of adding would pass from zero), one more
// launch runs on a smaller grid (a kernel that adds a number it knows would pass on the stage's),
// and every timed launch's count is checked too. Every launch starts where the one before did not
// (next_counter_start), so a kernel that writes back the value it ended at last time is wrong on
// every launch. A kernel that keeps the increase it counted once and adds it again is right every
// time: the right increase depends on the grid alone, so no change the driver makes can expose it
// (tests/known_gaps/counter_replays_increase.cu).
#include <fmt/format.h>

#include "check/datasets.h"
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
    context.announce.phase("tests", context.stage.runs + 1);
    SplitMix64 random(case_seed(context.seed, "counter", expected));
    std::vector<std::int64_t> counts;
    std::int64_t first_start = 0, first_end = 0;
    int start = 0;
    for (int run = 1; run <= context.stage.runs; ++run) {
      start = next_counter_start(start, random);
      const int end = launch_from(context, start, *launch.fixed_blocks);
      if (run == 1) {
        first_start = start;
        first_end = end;
      }
      counts.push_back(static_cast<std::int64_t>(end) - start);
      outcome.tests.push_back(judge_count(run, expected, counts.back()));
    }
    // The same kernel on a smaller grid must count that grid's threads.
    const int other_blocks = *launch.fixed_blocks / 2 + 7;
    const std::int64_t other_expected = static_cast<std::int64_t>(other_blocks) * launch.threads_per_block;
    start = next_counter_start(start, random);
    const std::int64_t other_increase =
        static_cast<std::int64_t>(launch_from(context, start, other_blocks)) - start;
    TestResult other = judge_count(context.stage.runs + 1, other_expected, other_increase);
    other.name = fmt::format("count on {} blocks", other_blocks);
    outcome.tests.push_back(other);
    add_constant_count_findings(first_start, expected, first_end, other_expected, other_increase,
                                outcome.findings);
    if (!outcome.findings.has(finding_code::kConstantAnswer))
      add_count_findings(counts, expected, outcome.findings);
  }

  void measure(ContractContext& context, ContractOutcome& outcome) override {
    context.announce.phase("timing", 2 * (kWarmupLaunches + StopRule::Settings{}.max_samples));
    const auto& launch = context.stage.launch;
    const std::int64_t expected = static_cast<std::int64_t>(*launch.fixed_blocks) * launch.threads_per_block;
    SplitMix64 random(case_seed(context.seed, "counter timing", expected));
    int start = 0;
    TimedResults results;
    TimedKernel submission = timed(context, context.submission, true);
    submission.prepare = [&] {
      start = next_counter_start(start, random);
      context.gpu.upload(counter_.get(), &start, sizeof start);
    };
    submission.verify = [&] {
      int end = 0;
      context.gpu.download(&end, counter_.get(), sizeof end);
      const std::int64_t increase = static_cast<std::int64_t>(end) - start;
      record_timed_result(results, static_cast<double>(expected), static_cast<double>(increase),
                          increase == expected);
    };
    auto times = time_interleaved(context.gpu, submission, timed(context, context.reference, false));
    add_stale_answer_findings(expected, results, outcome.findings);
    outcome.submission_time = times.submission;
    outcome.reference_time = times.reference;
    outcome.timed_n = static_cast<std::int64_t>(*context.stage.launch.fixed_blocks) *
                      context.stage.launch.threads_per_block;
    outcome.bytes_read_per_launch = 0;
  }

  void launch_once_for_tools(ContractContext& context, std::int64_t, const LoadedKernel& kernel,
                             const LaunchMarks& marks) override {
    allocate(context);
    context.gpu.fill_async(counter_.get(), 0, sizeof(int));
    context.gpu.sync_judge();
    if (marks.before) marks.before();
    launch_kernel(context, kernel, &kernel == &context.submission);
    tool_launched_ = true;
  }

  std::optional<bool> tool_answer_right(ContractContext& context) override {
    if (!tool_launched_) return std::nullopt;
    int end = 0;
    context.gpu.download(&end, counter_.get(), sizeof end);
    const auto& launch = context.stage.launch;
    return static_cast<std::int64_t>(end) ==
           static_cast<std::int64_t>(*launch.fixed_blocks) * launch.threads_per_block;
  }

 private:
  bool tool_launched_ = false;
  void allocate(ContractContext&) {
    if (!counter_.get()) counter_ = DeviceBuffer<int>(1);
  }

  // One learner launch on `blocks` blocks with the counter at `start`; returns where it ended.
  int launch_from(ContractContext& context, int start, int blocks) {
    context.gpu.upload(counter_.get(), &start, sizeof start);
    launch_kernel(context, context.submission, true, blocks);
    int end = 0;
    context.gpu.download(&end, counter_.get(), sizeof end);
    return end;
  }

  void launch_kernel(ContractContext& context, const LoadedKernel& kernel, bool learner,
                     std::optional<int> blocks = std::nullopt) {
    const KernelArgument args[] = {KernelArgument::array(counter_.get(), 1, sizeof(int))};
    const auto& launch = context.stage.launch;
    try {
      kernel.launch(dim3(blocks.value_or(*launch.fixed_blocks)), dim3(launch.threads_per_block),
                    launch.dynamic_shared_bytes, args, context.gpu.stream());
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
        [this, &context] { context.gpu.fill_async(counter_.get(), 0, sizeof(int)); },
        [this, &context, &kernel, launch] {
          const KernelArgument args[] = {KernelArgument::array(counter_.get(), 1, sizeof(int))};
          kernel.launch(dim3(*launch.fixed_blocks), dim3(launch.threads_per_block),
                        launch.dynamic_shared_bytes, args, context.gpu.stream());
        },
        learner,
        {}};
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
  if (contract == "two_kernel_sum") return make_two_kernel_sum_driver();
  if (auto exact = make_exact_driver(contract)) return exact;
  throw std::runtime_error(fmt::format("no driver for contract '{}'", contract));
}

}  // namespace cudojo

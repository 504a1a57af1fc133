// The exact contracts: every right answer is one bit pattern, whatever order the kernel's updates
// land in, so every launch can be compared bit for bit.
//   u64_sum    `__global__ void NAME(const unsigned int* X, unsigned long long* out, int N)`;
//              *out starts at 0 and must end as the 64-bit sum of X[0..N).
//   histogram  `__global__ void NAME(const unsigned int* values, unsigned int* bins, int N)`; the 256
//              bins start at 0 and bins[v % 256] must end as the count of values v.
//   float_max  `__global__ void NAME(const float* X, float* out, int N)`; *out starts at -infinity
//              and must end as the largest value (NaN skipped, +0.0 above -0.0).
// One driver, written once, runs all three; each contract supplies its data, its expected answer
// and its judgement (check/exact_checks.h). Around each learner launch, as for the float sums:
//   - the input is followed by a guard region; one launch plants a second guard value there, and an
//     answer that moves with it proves a read past N;
//   - shared memory is poisoned with two patterns, and an answer that moves with them proves a
//     read of a shared slot nothing wrote (a histogram whose shared bins were never zeroed);
//   - the same launch is repeated (a race or stale read gives another answer);
//   - the input is read back (a kernel must not write it);
//   - the timed launches each see one element changed, chosen so that the right answer moves
//     (check/exact_checks.h: ChangingUnsignedInput, ChangingMax), and are checked.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "check/exact_checks.h"
#include "check/findings.h"
#include "contract/driver.h"
#include "contract/kept_host_buffer.h"
#include "measure/timing.h"

namespace cudojo {

namespace {

constexpr std::int64_t kGuardElements = 4096;

// The unsigned contracts' input: 32-bit values of the stage's data sets (check/datasets.h).
struct UnsignedInput {
  using Input = std::uint32_t;
  using Changing = ChangingUnsignedInput;
  static void fill(std::string_view data, std::span<Input> values, std::uint64_t seed) {
    fill_unsigned_data(*parse_unsigned_data_kind(data), values, seed);
  }
  static Changing changing(std::string_view data, std::span<Input> values) {
    return Changing(values, *parse_unsigned_data_kind(data));
  }
};

struct U64SumContract : UnsignedInput {
  using Output = std::uint64_t;
  using Expected = std::uint64_t;
  static constexpr std::size_t kOutputs = 1;
  // A read past N adds 1 per element under the quiet guard and 2^32 - 1 under the loud one.
  static constexpr Input kGuardQuiet = 1;
  static constexpr Input kGuardLoud = 0xFFFFFFFFu;

  static Output initial() { return 0; }
  static Expected expect(std::span<const Input> values) { return expected_u64_sum(values); }
  static Expected expect(const Changing& changing) { return changing.sum(); }
  static bool matches(const Expected& expected, std::span<const Output> got) { return got[0] == expected; }
  static TestResult judge(std::string_view data, std::int64_t n, const Expected& expected,
                          std::span<const Output> got, FindingSet& findings) {
    add_u64_sum_findings(n, expected, got[0], findings);
    return judge_u64_sum(data, n, expected, got[0]);
  }
  static std::pair<double, double> summary(const Expected& expected, std::span<const Output> got) {
    return {static_cast<double>(expected), static_cast<double>(got[0])};
  }
};

struct HistogramContract : UnsignedInput {
  using Output = std::uint32_t;
  using Expected = Histogram;
  static constexpr std::size_t kOutputs = kHistogramBins;
  // Different bins: an answer that read past N moves from one to the other.
  static constexpr Input kGuardQuiet = 5;
  static constexpr Input kGuardLoud = 250;

  static Output initial() { return 0; }
  static Expected expect(std::span<const Input> values) { return expected_histogram(values); }
  static const Expected& expect(const Changing& changing) { return changing.histogram(); }
  static bool matches(const Expected& expected, std::span<const Output> got) {
    return std::equal(expected.begin(), expected.end(), got.begin(), got.end());
  }
  static TestResult judge(std::string_view data, std::int64_t n, const Expected& expected,
                          std::span<const Output> got, FindingSet& findings) {
    add_histogram_findings(n, expected, got, findings);
    return judge_histogram(data, n, expected, got);
  }
  static std::pair<double, double> summary(const Expected& expected, std::span<const Output> got) {
    for (std::size_t b = 0; b < kHistogramBins; ++b) {
      if (got[b] != expected[b]) return {static_cast<double>(expected[b]), static_cast<double>(got[b])};
    }
    return {static_cast<double>(expected[0]), static_cast<double>(got[0])};
  }
};

struct FloatMaxContract {
  using Input = float;
  using Output = float;
  using Expected = float;
  using Changing = ChangingMax;
  static constexpr std::size_t kOutputs = 1;
  // Both far above any data value: a read past N wins the max, and shows which guard it read.
  static constexpr Input kGuardQuiet = 1000.0f;
  static constexpr Input kGuardLoud = 2199023255552.0f;  // 2^41

  static Output initial() { return -std::numeric_limits<float>::infinity(); }
  static void fill(std::string_view data, std::span<Input> values, std::uint64_t seed) {
    fill_data(*parse_data_kind(data), values, seed);
  }
  static Changing changing(std::string_view data, std::span<Input> values) {
    return Changing(values, *parse_data_kind(data));
  }
  static Expected expect(std::span<const Input> values) { return expected_max(values); }
  static Expected expect(const Changing& changing) { return changing.expected(); }
  static bool matches(const Expected& expected, std::span<const Output> got) {
    return float_bits(expected) == float_bits(got[0]);
  }
  static TestResult judge(std::string_view data, std::int64_t n, const Expected& expected,
                          std::span<const Output> got, FindingSet& findings) {
    add_max_findings(n, expected, got[0], findings);
    return judge_max(data, n, expected, got[0]);
  }
  static std::pair<double, double> summary(const Expected& expected, std::span<const Output> got) {
    return {expected, got[0]};
  }
};

template <typename T>
std::uint64_t fingerprint_of(const std::vector<T>& values) {
  return fingerprint_bytes(std::as_bytes(std::span<const T>(values)));
}

template <typename Contract>
class ExactDriver : public ContractDriver {
  using Input = typename Contract::Input;
  using Output = typename Contract::Output;

 public:
  double time_reference(ContractContext& context) override {
    const std::int64_t n = context.stage.performance_size;
    upload_case(context, timing_data(context), n, Contract::kGuardQuiet);
    return time_alone(context.gpu, timed(context, context.reference, n, false), 5).median_ms;
  }

  void run_tests(ContractContext& context, ContractOutcome& outcome) override {
    const Stage& stage = context.stage;
    context.announce.phase("tests", static_cast<int>(stage.test_sizes.size() * stage.data_sets.size()) * 6);
    for (const auto& data : stage.data_sets) {
      for (std::int64_t n : stage.test_sizes) run_case(context, data, n, outcome);
    }
    context.announce.phase("determinism", stage.runs);
    determinism(context, outcome);
  }

  void measure(ContractContext& context, ContractOutcome& outcome) override {
    const std::int64_t n = context.stage.performance_size;
    const std::string data = timing_data(context);
    context.announce.phase("timing", 2 * (kWarmupLaunches + StopRule::Settings{}.max_samples));
    upload_case(context, data, n, Contract::kGuardQuiet);
    std::span<Input> values(host_.data(), static_cast<std::size_t>(n));
    typename Contract::Changing changing = Contract::changing(data, values);
    SplitMix64 random(case_seed(context.seed, "timing", n));
    TimedKernel submission = timed(context, context.submission, n, true);
    submission.prepare = [&] {
      // One element changes before every launch, so that the answer moves; the answer follows
      // it without a pass over X, and only that element travels to the GPU.
      const std::size_t i = changing.change_one(random);
      context.gpu.upload(input_.get() + i, &values[i], sizeof(Input));
      reset_output(context);
    };
    TimedResults results;
    submission.verify = [&] {
      const auto got = download_output(context);
      const auto& expected = Contract::expect(changing);
      const auto [want, have] = Contract::summary(expected, got);
      record_timed_result(results, want, have, Contract::matches(expected, got));
    };
    auto times = time_interleaved(context.gpu, submission, timed(context, context.reference, n, false));
    add_stale_answer_findings(n, results, outcome.findings);
    outcome.submission_time = times.submission;
    outcome.reference_time = times.reference;
    outcome.timed_n = n;
    outcome.bytes_read_per_launch = static_cast<double>(n) * sizeof(Input);
  }

  void launch_once_for_tools(ContractContext& context, std::int64_t n, const LoadedKernel& kernel,
                             const LaunchMarks& marks) override {
    // Buffers exactly n long (memcheck sees any read past the input), refreshed from a pristine
    // copy before each launch (a profiler replays it many times).
    if (tool_n_ != n) {
      std::vector<Input> host(static_cast<std::size_t>(n));
      Contract::fill(timing_data(context), host, case_seed(context.seed, "tools", n));
      tool_pristine_ = DeviceBuffer<Input>(host.size());
      tool_input_ = DeviceBuffer<Input>(host.size());
      tool_output_ = DeviceBuffer<Output>(Contract::kOutputs);
      context.gpu.upload(tool_pristine_.get(), host.data(), tool_pristine_.bytes());
      tool_expected_ = Contract::expect(host);
      tool_n_ = n;
    }
    context.gpu.copy_async(tool_input_.get(), tool_pristine_.get(), tool_input_.bytes(),
                           cudaMemcpyDeviceToDevice);
    initial_.assign(Contract::kOutputs, Contract::initial());
    context.gpu.upload(tool_output_.get(), initial_.data(), tool_output_.bytes());
    context.gpu.sync_judge();
    if (marks.before) marks.before();
    try {
      launch(context, kernel, tool_input_.get(), tool_output_.get(), n);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), std::string("launching the submission: ") + error.what());
    }
    context.gpu.sync_learner(fmt::format("the kernel at n={}", n));
  }

  std::optional<bool> tool_answer_right(ContractContext& context) override {
    if (tool_n_ < 0) return std::nullopt;
    std::vector<Output> got(Contract::kOutputs);
    context.gpu.download(got.data(), tool_output_.get(), tool_output_.bytes());
    return Contract::matches(tool_expected_, got);
  }

 private:
  std::string timing_data(const ContractContext& context) const { return timing_data_set(context.stage); }

  void allocate(ContractContext& context) {
    if (input_.get()) return;
    std::int64_t max_n = context.stage.performance_size;
    for (auto n : context.stage.test_sizes) max_n = std::max(max_n, n);
    input_ = DeviceBuffer<Input>(static_cast<std::size_t>(max_n + kGuardElements));
    pristine_ = DeviceBuffer<Input>(input_.count());
    host_.at_least(input_.count());
    output_ = DeviceBuffer<Output>(Contract::kOutputs);
    initial_.assign(Contract::kOutputs, Contract::initial());
  }

  void upload_case(ContractContext& context, std::string_view data, std::int64_t n, Input guard) {
    allocate(context);
    Contract::fill(data, std::span<Input>(host_.data(), static_cast<std::size_t>(n)),
                   case_seed(context.seed, data, n));
    std::fill_n(host_.begin() + n, kGuardElements, guard);
    context.gpu.upload(input_.get(), host_.data(),
                       static_cast<std::size_t>(n + kGuardElements) * sizeof(Input));
  }

  void set_guard(ContractContext& context, std::int64_t n, Input guard) {
    std::fill_n(host_.begin() + n, kGuardElements, guard);
    context.gpu.upload(input_.get() + n, host_.data() + n, kGuardElements * sizeof(Input));
  }

  void reset_output(ContractContext& context) {
    context.gpu.copy_async(output_.get(), initial_.data(), output_.bytes(), cudaMemcpyHostToDevice);
  }

  std::vector<Output> download_output(ContractContext& context) {
    std::vector<Output> got(Contract::kOutputs);
    context.gpu.download(got.data(), output_.get(), output_.bytes());
    return got;
  }

  void launch(ContractContext& context, const LoadedKernel& kernel, const Input* input, Output* output,
              std::int64_t n) {
    // The arrays' lengths are what the kernel may touch: the guard region is not the kernel's.
    const KernelArgument args[] = {
        KernelArgument::array(input, n, sizeof(Input)),
        KernelArgument::array(output, static_cast<std::int64_t>(Contract::kOutputs), sizeof(Output)),
        KernelArgument::scalar(static_cast<int>(n))};
    const auto& shape = context.stage.launch;
    kernel.launch(dim3(grid_blocks(context, n)), dim3(shape.threads_per_block), shape.dynamic_shared_bytes,
                  args, context.gpu.stream());
  }

  std::vector<Output> run_submission(ContractContext& context, std::int64_t n, float shared_pattern,
                                     std::string_view what) {
    reset_output(context);
    context.gpu.poison_shared(shared_pattern);
    context.gpu.sync_judge();
    try {
      launch(context, context.submission, input_.get(), output_.get(), n);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), fmt::format("launching the submission at {}: {}", what, error.what()));
    }
    context.gpu.sync_learner(fmt::format("the submission at {}", what));
    return download_output(context);
  }

  void run_case(ContractContext& context, const std::string& data, std::int64_t n, ContractOutcome& outcome) {
    upload_case(context, data, n, Contract::kGuardQuiet);
    const auto expected = Contract::expect(std::span<const Input>(host_.data(), static_cast<std::size_t>(n)));
    const std::string what = describe_test(data, n);
    {
      // The case's launches (and any confirmation) ask for the GPU alone once, not once each: the
      // host work between them is a comparison of a few words.
      GpuSession::PlantingSpan span(context.gpu);
      const auto judged = run_submission(context, n, kSharedPoisonLoud, what);
      outcome.tests.push_back(Contract::judge(data, n, expected, judged, outcome.findings));

      // Every right answer is one bit pattern, so any of these launches that disagrees with the
      // judged one read something it should not have, or raced. A planting is blamed only when the
      // kernel gives the same answer twice under it and another answer under the other planting; a
      // racing kernel rarely repeats itself, and is reported as nondeterministic instead.
      const auto repeat = run_submission(context, n, kSharedPoisonLoud, what + " (repeated)");
      const auto quiet = run_submission(context, n, kSharedPoisonQuiet, what + " (second shared pattern)");
      const auto quiet_again =
          run_submission(context, n, kSharedPoisonQuiet, what + " (second shared pattern again)");
      set_guard(context, n, Contract::kGuardLoud);
      const auto guard = run_submission(context, n, kSharedPoisonQuiet, what + " (guard pattern)");
      const auto guard_again =
          run_submission(context, n, kSharedPoisonQuiet, what + " (guard pattern again)");
      set_guard(context, n, Contract::kGuardQuiet);
      // Compared as bits (a NaN answer equals itself here).
      const std::uint64_t judged_print = fingerprint_of(judged), quiet_print = fingerprint_of(quiet),
                          guard_print = fingerprint_of(guard);
      const bool stable = fingerprint_of(repeat) == judged_print;
      const bool quiet_stable = fingerprint_of(quiet_again) == quiet_print;
      if (!stable || !quiet_stable) {
        // Only the pair that should have agreed: the two plantings differ on purpose.
        const std::uint64_t prints[] = {stable ? quiet_print : judged_print,
                                        stable ? fingerprint_of(quiet_again) : fingerprint_of(repeat)};
        add_determinism_findings(n, prints, outcome.findings);
      } else if (quiet_print != judged_print &&
                 confirmed(context, n, what, judged_print, quiet_print, false)) {
        outcome.findings.add(
            finding_code::kUninitializedShared,
            "the answer changed with what the judge left in shared memory before the launch: the "
            "kernel reads shared memory it never wrote (shared bins or sums must be set, e.g. to 0, "
            "before they are added to)",
            n);
      }
      if (quiet_stable && fingerprint_of(guard_again) == guard_print && guard_print != quiet_print &&
          confirmed(context, n, what, quiet_print, guard_print, true)) {
        outcome.findings.add(
            finding_code::kOutOfBounds,
            "the answer changed with the values the judge placed after element N-1: the kernel "
            "reads past the end of its input (guard every load with i < N)",
            n);
      }
    }

    // The input as the host made it (guard included) goes up again only now, after the kernel's
    // last launch, and the two are compared there: a copy made before the launches would be
    // memory the kernel could reach and rewrite to match what it did to its input.
    static_assert(sizeof(Input) == 4, "the input is compared on the device as 32-bit words");
    const std::size_t words = static_cast<std::size_t>(n + kGuardElements);
    context.gpu.upload(pristine_.get(), host_.data(), words * sizeof(Input));
    const auto changed = context.gpu.count_changed_words(input_.get(), pristine_.get(), words);
    add_input_findings(n, changed.first, changed.changed, outcome.findings);
  }

  // A racing kernel whose answer has few possible values (a float max over zeros of either sign)
  // can repeat itself by chance under each planting and differ between them by chance too. Before
  // a planting is blamed, both are launched four more times each, alternately: every launch must
  // give its planting's answer again. Kernels that do not race pay nothing; they never get here.
  bool confirmed(ContractContext& context, std::int64_t n, const std::string& what, std::uint64_t first_print,
                 std::uint64_t second_print, bool guards) {
    for (int round = 0; round < 4; ++round) {
      for (const bool second : {false, true}) {
        float shared = kSharedPoisonQuiet;
        if (guards) {
          set_guard(context, n, second ? Contract::kGuardLoud : Contract::kGuardQuiet);
        } else {
          shared = second ? kSharedPoisonQuiet : kSharedPoisonLoud;
        }
        const auto got = run_submission(context, n, shared, what + " (planting confirmed)");
        if (fingerprint_of(got) != (second ? second_print : first_print)) {
          set_guard(context, n, Contract::kGuardQuiet);
          return false;
        }
      }
    }
    set_guard(context, n, Contract::kGuardQuiet);
    return true;
  }

  void determinism(ContractContext& context, ContractOutcome& outcome) {
    const std::int64_t n = context.stage.performance_size;
    const std::string data = timing_data(context);
    upload_case(context, data, n, Contract::kGuardQuiet);
    const auto expected = Contract::expect(std::span<const Input>(host_.data(), static_cast<std::size_t>(n)));
    std::vector<std::uint64_t> prints;
    DeterminismResult result{data, n, context.stage.runs, 0, 0, 0};
    for (int run = 0; run < context.stage.runs; ++run) {
      const auto got =
          run_submission(context, n, kSharedPoisonLoud,
                         fmt::format("{} (determinism run {})", describe_test(data, n), run + 1));
      prints.push_back(fingerprint_of(got));
      const double value = Contract::summary(expected, got).second;
      result.min = run == 0 ? value : std::min(result.min, value);
      result.max = run == 0 ? value : std::max(result.max, value);
    }
    result.distinct = count_distinct(prints);
    outcome.determinism.push_back(result);
    add_determinism_findings(n, prints, outcome.findings);
  }

  TimedKernel timed(ContractContext& context, const LoadedKernel& kernel, std::int64_t n, bool learner) {
    return TimedKernel{
        [this, &context] { reset_output(context); },
        [this, &context, &kernel, n] { launch(context, kernel, input_.get(), output_.get(), n); },
        learner,
        {}};
  }

  DeviceBuffer<Input> input_;
  DeviceBuffer<Output> output_;
  DeviceBuffer<Input> pristine_;
  KeptHostBuffer<Input> host_;
  std::vector<Output> initial_;
  std::int64_t tool_n_ = -1;
  typename Contract::Expected tool_expected_{};
  DeviceBuffer<Input> tool_pristine_;
  DeviceBuffer<Input> tool_input_;
  DeviceBuffer<Output> tool_output_;
};

}  // namespace

std::unique_ptr<ContractDriver> make_exact_driver(std::string_view contract) {
  if (contract == "u64_sum") return std::make_unique<ExactDriver<U64SumContract>>();
  if (contract == "histogram") return std::make_unique<ExactDriver<HistogramContract>>();
  if (contract == "float_max") return std::make_unique<ExactDriver<FloatMaxContract>>();
  return nullptr;
}

}  // namespace cudojo

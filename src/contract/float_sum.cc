// The float-sum contracts:
//   one_accumulator    `__global__ void NAME(const float* X, float* out, int N)`; *out starts at 0
//                      and must end as the sum of X[0..N).
//   partial_per_block  `__global__ void NAME(const float* X, float* partial, int N)`; partial[b]
//                      must end as block b's own sum; the host adds them.
// Both launch ceil(N / threads) blocks with the stage's dynamic shared memory.
//
// What the driver does around each learner launch, and why:
//   - X is followed by a guard region (1000.0f); on exact data one launch puts 2^41 there instead,
//     and an answer that large proves a thread read past N.
//   - Every SM's shared memory is filled with 2^40 before each launch; on exact data the launch is
//     repeated as it was (a race shows as a different answer) and under -3.0f, and the answer must
//     not move (else a shared slot was read before anything wrote it).
//   - partial[] is filled with a NaN payload, so unwritten slots are visible.
//   - X is read back and compared with the host copy (a kernel must not write its input).
//   - While timing, one element of X changes before each of the submission's launches, outside the
//     timed region, and every timed result is checked: state kept between launches gains nothing.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "check/findings.h"
#include "contract/driver.h"
#include "measure/timing.h"

namespace cudojo {

namespace {

// Long enough to cover a whole block's worth of reads past N at any block size.
constexpr std::int64_t kGuardElements = 4096;

// The timed launches' input: exact data (integers 0..3), of which one element, chosen at random,
// changes to another of those values before each of the submission's launches. The sums stay exact
// (below 2^24), so each result must equal, bit for bit, the sum of X as it then is.
class ChangingInput {
 public:
  // block_size 0: one total; else one sum per block of that many elements (partial_per_block).
  ChangingInput(ContractContext& context, std::vector<float>& host_x, std::int64_t n, int block_size)
      : host_x_(host_x), n_(n), block_size_(block_size), random_(case_seed(context.seed, "timing", n)) {
    const std::size_t sums = block_size ? static_cast<std::size_t>((n + block_size - 1) / block_size) : 1;
    sums_.assign(sums, 0.0);
    for (std::int64_t i = 0; i < n; ++i) sums_[slot(i)] += host_x_[static_cast<std::size_t>(i)];
  }

  void change_one(ContractContext& context, float* device_x) {
    const auto i = static_cast<std::int64_t>(random_.next() % static_cast<std::uint64_t>(n_));
    float& value = host_x_[static_cast<std::size_t>(i)];
    const float changed = static_cast<float>((static_cast<int>(value) + 1 + random_.next() % 3) % 4);
    sums_[slot(i)] += changed - value;
    value = changed;
    context.gpu.upload(device_x + i, &value, sizeof(float));
  }

  void check(std::span<const float> got, TimedResults& results) const {
    bool ok = got.size() == sums_.size();
    std::size_t first_bad = 0;
    for (std::size_t k = 0; ok && k < got.size(); ++k) {
      if (got[k] != static_cast<float>(sums_[k])) {
        ok = false;
        first_bad = k;
      }
    }
    record_timed_result(results, sums_[first_bad], got.empty() ? 0.0 : got[first_bad], ok);
  }

 private:
  std::size_t slot(std::int64_t i) const {
    return block_size_ ? static_cast<std::size_t>(i / block_size_) : 0;
  }

  std::vector<float>& host_x_;
  std::int64_t n_;
  int block_size_;
  SplitMix64 random_;
  std::vector<double> sums_;
};

class FloatSumDriver : public ContractDriver {
 public:
  explicit FloatSumDriver(bool partial_per_block) : partial_(partial_per_block) {}

  double time_reference(ContractContext& context) override {
    allocate(context);
    upload_case(context, DataKind::kExact, context.stage.performance_size, kGuardQuiet);
    return time_alone(context.gpu, timed(context, context.reference, context.stage.performance_size, false),
                      5)
        .median_ms;
  }

  void run_tests(ContractContext& context, ContractOutcome& outcome) override {
    const Stage& stage = context.stage;
    int launches = 0;
    for (const auto& name : stage.data_sets) {
      launches += static_cast<int>(stage.test_sizes.size()) * (name == "exact" ? 4 : 1);
    }
    context.announce.phase("tests", launches);
    for (const auto& name : stage.data_sets) {
      const DataKind kind = *parse_data_kind(name);
      for (std::int64_t n : stage.test_sizes) run_case(context, kind, n, outcome);
    }

    context.announce.phase("determinism", 2 * stage.runs);
    determinism(context, DataKind::kExact, outcome);
    determinism(context, DataKind::kRandomSigned, outcome);
  }

  void measure(ContractContext& context, ContractOutcome& outcome) override {
    const std::int64_t n = context.stage.performance_size;
    context.announce.phase("timing", 2 * (kWarmupLaunches + StopRule::Settings{}.max_samples));
    upload_case(context, DataKind::kExact, n, kGuardQuiet);
    ChangingInput input(context, host_x_, n, partial_ ? context.stage.launch.threads_per_block : 0);
    TimedKernel submission = timed(context, context.submission, n, true);
    submission.prepare = [this, &context, &input, n] {
      input.change_one(context, x_.get());
      reset_output(context, n);
    };
    TimedResults results;
    submission.verify = [this, &context, &input, &results, n] {
      std::vector<float> got(partial_ ? static_cast<std::size_t>(blocks_for(context, n)) : 1);
      context.gpu.download(got.data(), out_.get(), got.size() * sizeof(float));
      input.check(got, results);
    };
    auto times = time_interleaved(context.gpu, submission, timed(context, context.reference, n, false));
    add_stale_answer_findings(n, results, outcome.findings);
    outcome.submission_time = times.submission;
    outcome.reference_time = times.reference;
    outcome.timed_n = n;
    outcome.bytes_read_per_launch = static_cast<double>(n) * sizeof(float);
  }

  void launch_once_for_tools(ContractContext& context, std::int64_t n, const LoadedKernel& kernel,
                             const LaunchMarks& marks) override {
    // A profiler replays these launches many times: the data is made once per size, and each
    // launch gets a fresh copy of it from the device (a kernel that wrote its input cannot skew
    // the next pass). Buffers are exactly n long so memcheck sees any read past X.
    if (tool_n_ != n) {
      std::vector<float> host(static_cast<std::size_t>(n));
      fill_data(DataKind::kExact, host, case_seed(context.seed, "tools", n));
      tool_pristine_ = DeviceBuffer<float>(host.size());
      tool_x_ = DeviceBuffer<float>(host.size());
      tool_out_ = DeviceBuffer<float>(partial_ ? static_cast<std::size_t>(blocks_for(context, n)) : 1);
      context.gpu.upload(tool_pristine_.get(), host.data(), tool_pristine_.bytes());
      tool_n_ = n;
    }
    const DeviceBuffer<float>& x = tool_x_;
    const DeviceBuffer<float>& out = tool_out_;
    CUDOJO_CUDA(cudaMemcpyAsync(x.get(), tool_pristine_.get(), x.bytes(), cudaMemcpyDeviceToDevice,
                                context.gpu.stream()));
    CUDOJO_CUDA(cudaMemsetAsync(out.get(), 0, out.bytes(), context.gpu.stream()));
    context.gpu.sync_judge();
    const KernelArgument args[] = {
        KernelArgument::array(x.get(), n, sizeof(float)),
        KernelArgument::array(out.get(), static_cast<std::int64_t>(out.count()), sizeof(float)),
        KernelArgument::scalar(static_cast<int>(n))};
    const auto& launch = context.stage.launch;
    if (marks.before) marks.before();
    try {
      kernel.launch(dim3(blocks_for(context, n)), dim3(launch.threads_per_block), launch.dynamic_shared_bytes,
                    args, context.gpu.stream());
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), std::string("launching the submission: ") + error.what());
    }
    context.gpu.sync_learner(fmt::format("the kernel at n={}", n));
  }

 private:
  std::int64_t tool_n_ = -1;
  DeviceBuffer<float> tool_pristine_;
  DeviceBuffer<float> tool_x_;
  DeviceBuffer<float> tool_out_;

  int blocks_for(const ContractContext& context, std::int64_t n) const {
    const int threads = context.stage.launch.threads_per_block;
    return static_cast<int>((n + threads - 1) / threads);
  }

  void allocate(ContractContext& context) {
    if (x_.get()) return;
    std::int64_t max_n = context.stage.performance_size;
    for (auto n : context.stage.test_sizes) max_n = std::max(max_n, n);
    x_ = DeviceBuffer<float>(static_cast<std::size_t>(max_n + kGuardElements));
    host_x_.assign(static_cast<std::size_t>(max_n + kGuardElements), 0.0f);
    const std::size_t outputs = partial_ ? static_cast<std::size_t>(blocks_for(context, max_n)) : 1;
    out_ = DeviceBuffer<float>(outputs);
    float unwritten;
    std::memcpy(&unwritten, &kUnwrittenPartialBits, sizeof unwritten);
    unwritten_pattern_.assign(outputs, unwritten);
  }

  // Fills X[0..n) with the data and the guard after it with `guard`, on the host and the device.
  void upload_case(ContractContext& context, DataKind kind, std::int64_t n, float guard) {
    allocate(context);
    fill_data(kind, std::span<float>(host_x_.data(), static_cast<std::size_t>(n)),
              case_seed(context.seed, to_string(kind), n));
    std::fill_n(host_x_.begin() + n, kGuardElements, guard);
    context.gpu.upload(x_.get(), host_x_.data(),
                       static_cast<std::size_t>(n + kGuardElements) * sizeof(float));
  }

  void set_guard(ContractContext& context, std::int64_t n, float guard) {
    std::fill_n(host_x_.begin() + n, kGuardElements, guard);
    context.gpu.upload(x_.get() + n, host_x_.data() + n, kGuardElements * sizeof(float));
  }

  // Resets the output: zero for an accumulator, the unwritten marker for partials.
  void reset_output(ContractContext& context, std::int64_t n) {
    if (partial_) {
      CUDOJO_CUDA(cudaMemcpyAsync(out_.get(), unwritten_pattern_.data(),
                                  static_cast<std::size_t>(blocks_for(context, n)) * sizeof(float),
                                  cudaMemcpyHostToDevice, context.gpu.stream()));
    } else {
      CUDOJO_CUDA(cudaMemsetAsync(out_.get(), 0, sizeof(float), context.gpu.stream()));
    }
  }

  void launch_kernel(ContractContext& context, const LoadedKernel& kernel, std::int64_t n) {
    // The arrays' lengths are what the kernel may touch (a Numba kernel sees them as X.shape[0]):
    // the guard region and unused partial slots are not the kernel's.
    const std::int64_t outputs = partial_ ? blocks_for(context, n) : 1;
    const KernelArgument args[] = {KernelArgument::array(x_.get(), n, sizeof(float)),
                                   KernelArgument::array(out_.get(), outputs, sizeof(float)),
                                   KernelArgument::scalar(static_cast<int>(n))};
    const auto& launch = context.stage.launch;
    kernel.launch(dim3(blocks_for(context, n)), dim3(launch.threads_per_block), launch.dynamic_shared_bytes,
                  args, context.gpu.stream());
  }

  // One learner launch under a shared-memory pattern; returns the output buffer.
  std::vector<float> run_submission(ContractContext& context, std::int64_t n, float shared_pattern,
                                    std::string_view what) {
    reset_output(context, n);
    context.gpu.poison_shared(shared_pattern);
    context.gpu.sync_judge();
    try {
      launch_kernel(context, context.submission, n);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), fmt::format("launching the submission at {}: {}", what, error.what()));
    }
    context.gpu.sync_learner(fmt::format("the submission at {}", what));
    std::vector<float> result(partial_ ? static_cast<std::size_t>(blocks_for(context, n)) : 1);
    context.gpu.download(result.data(), out_.get(), result.size() * sizeof(float));
    return result;
  }

  void judge(ContractContext& context, DataKind kind, std::int64_t n, const std::vector<float>& result,
             ContractOutcome& outcome) {
    std::span<const float> values(host_x_.data(), static_cast<std::size_t>(n));
    const ReferenceSum total = reference_sum(values);
    if (!partial_) {
      outcome.tests.push_back(judge_total(to_string(kind), n, is_exact(kind), result[0], total));
      if (!outcome.tests.back().ok && !is_exact(kind) && result[0] != result[0]) {
        outcome.findings.add(finding_code::kWrongValue, "the sum came out as NaN", n);
      }
      return;
    }
    auto per_block = block_reference_sums(values, context.stage.launch.threads_per_block);
    PartialAnalysis analysis = analyse_partials(result, per_block, is_exact(kind), total);
    outcome.tests.push_back(judge_partials(to_string(kind), n, analysis, total));
    add_partial_findings(n, analysis, outcome.findings);
  }

  void run_case(ContractContext& context, DataKind kind, std::int64_t n, ContractOutcome& outcome) {
    upload_case(context, kind, n, kGuardQuiet);
    const std::string what = describe_test(to_string(kind), n);
    PoisonRuns runs;
    runs.shared_loud = run_submission(context, n, kSharedPoisonLoud, what);
    judge(context, kind, n, runs.shared_loud, outcome);
    if (!is_exact(kind)) return;

    // Exact data gives one right bit pattern whatever the order of additions, so any change below
    // is the kernel reading something it should not. The same launch again first: if identical
    // launches disagree, the kernel races or reads stale memory, and is reported as such.
    const auto repeat = run_submission(context, n, kSharedPoisonLoud, what + " (repeated)");
    if (fingerprint(repeat) != fingerprint(runs.shared_loud)) {
      const std::uint64_t prints[] = {fingerprint(runs.shared_loud), fingerprint(repeat)};
      add_determinism_findings(n, prints, outcome.findings);
    }
    runs.shared_quiet = run_submission(context, n, kSharedPoisonQuiet, what + " (second shared pattern)");
    set_guard(context, n, kGuardLoud);
    runs.guard_loud = run_submission(context, n, kSharedPoisonQuiet, what + " (guard pattern)");
    if (fingerprint(repeat) == fingerprint(runs.shared_loud)) {
      add_poison_findings(n, runs, outcome.findings);
    } else {
      // A racing kernel differs between any two launches; only the loud values still prove a read.
      PoisonRuns loud_only{runs.shared_loud, runs.shared_loud, runs.guard_loud};
      add_poison_findings(n, loud_only, outcome.findings);
    }

    std::vector<float> after(static_cast<std::size_t>(n + kGuardElements));
    context.gpu.download(after.data(), x_.get(), after.size() * sizeof(float));
    std::int64_t changed = 0, first = -1;
    for (std::size_t i = 0; i < after.size(); ++i) {
      if (float_bits(after[i]) != float_bits(host_x_[i])) {
        if (first < 0) first = static_cast<std::int64_t>(i);
        ++changed;
      }
    }
    add_input_findings(n, first, changed, outcome.findings);
  }

  void determinism(ContractContext& context, DataKind kind, ContractOutcome& outcome) {
    const std::int64_t n = context.stage.performance_size;
    upload_case(context, kind, n, kGuardQuiet);
    std::vector<std::uint64_t> prints;
    DeterminismResult result{std::string(to_string(kind)), n, context.stage.runs, 0, 0, 0};
    for (int run = 0; run < context.stage.runs; ++run) {
      auto output =
          run_submission(context, n, kSharedPoisonLoud,
                         fmt::format("{} (determinism run {})", describe_test(to_string(kind), n), run + 1));
      prints.push_back(fingerprint(output));
      double value = 0;
      for (float v : output) value += v;
      result.min = run == 0 ? value : std::min(result.min, value);
      result.max = run == 0 ? value : std::max(result.max, value);
    }
    result.distinct = count_distinct(prints);
    outcome.determinism.push_back(result);
    if (is_exact(kind)) add_determinism_findings(n, prints, outcome.findings);
  }

  TimedKernel timed(ContractContext& context, const LoadedKernel& kernel, std::int64_t n, bool learner) {
    return TimedKernel{[this, &context, n] { reset_output(context, n); },
                       [this, &context, &kernel, n] { launch_kernel(context, kernel, n); },
                       learner,
                       {}};
  }

  bool partial_;
  DeviceBuffer<float> x_;
  DeviceBuffer<float> out_;
  std::vector<float> host_x_;
  std::vector<float> unwritten_pattern_;
};

}  // namespace

std::unique_ptr<ContractDriver> make_float_sum_driver(bool partial_per_block) {
  return std::make_unique<FloatSumDriver>(partial_per_block);
}

}  // namespace cudojo

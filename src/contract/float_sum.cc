// The float-sum contracts:
//   one_accumulator    `__global__ void NAME(const float* X, float* out, int N)`; *out starts at 0
//                      and must end as the sum of X[0..N).
//   partial_per_block  `__global__ void NAME(const float* X, float* partial, int N)`; partial[b]
//                      must end as block b's own sum; the host adds them.
//   two_kernel_sum     `__global__ void NAME(const float* X, float* partial, int N)` on the stage's
//                      fixed grid, then `__global__ void SECOND(const float* partial, float* out,
//                      int count)` on one block; *out must hold the sum, the same bits every run.
// They launch the stage's grid (ceil(N / threads) blocks unless it fixes one) with the stage's
// dynamic shared memory.
//
// What the driver does around each learner launch, and why:
//   - X is followed by a guard region (1000.0f); on exact data one launch puts 2^41 there instead,
//     and an answer that large proves a thread read past N.
//   - Every SM's shared memory is filled with 2^40 before each launch; on exact data the launch is
//     repeated as it was (a race shows as a different answer) and under -3.0f, and the answer must
//     not move (else a shared slot was read before anything wrote it).
//   - partial[] (and a two-kernel sum's *out) is filled with a NaN payload, so unwritten slots are
//     visible.
//   - A stage with a precision bound (max_relative_error) holds inexact answers to it; a stage that
//     asks for determinism wants the same bits on inexact data too.
//   - A stage gated against CUB times CUB's sum of the same X in the same rotation.
//   - X is read back and compared with the host copy (a kernel must not write its input).
//   - While timing, one element of X changes before each of the submission's launches, outside the
//     timed region, to another whole value, so every sum moves; every timed result is checked:
//     state kept between launches gains nothing.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "check/exact_checks.h"
#include "check/findings.h"
#include "contract/cub_baseline.h"
#include "contract/driver.h"
#include "contract/float_sum_judge.h"
#include "contract/float_sum_timed_input.h"
#include "contract/kept_host_buffer.h"
#include "measure/timing.h"

namespace cudojo {

namespace {

using float_sum_internal::ChangingInput;

// Long enough to cover a whole block's worth of reads past N at any block size.
constexpr std::int64_t kGuardElements = 4096;

enum class FloatSumShape { kOneAccumulator, kPartialPerBlock, kTwoKernels };

class FloatSumDriver : public ContractDriver {
 public:
  explicit FloatSumDriver(FloatSumShape shape)
      : partial_(shape == FloatSumShape::kPartialPerBlock),
        two_kernels_(shape == FloatSumShape::kTwoKernels) {}

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
    determinism(context, stage.deterministic ? inexact_data(stage) : DataKind::kRandomSigned, outcome);
  }

  void measure(ContractContext& context, ContractOutcome& outcome) override {
    const std::int64_t n = context.stage.performance_size;
    context.announce.phase("timing", 2 * (kWarmupLaunches + StopRule::Settings{}.max_samples));
    upload_case(context, DataKind::kExact, n, kGuardQuiet);
    ChangingInput input(context, host_x_.values(), n, partial_ ? context.stage.launch.threads_per_block : 0);
    TimedKernel submission = timed(context, context.submission, n, true);
    submission.prepare = [this, &context, &input, n] {
      input.change_one(context, x_.get());
      reset_output(context, n);
    };
    TimedResults results;
    submission.verify = [this, &context, &input, &results, n] {
      std::vector<float> got(output_count(context, n));
      context.gpu.download(got.data(), out_.get(), got.size() * sizeof(float));
      input.check(got, results);
    };
    std::optional<TimedKernel> baseline;
    if (context.stage.gate.rule == GateRule::kBaselineRatio) baseline = cub_baseline(context, n);
    auto times = time_interleaved(context.gpu, submission, timed(context, context.reference, n, false), {},
                                  baseline ? &*baseline : nullptr);
    add_stale_answer_findings(n, results, outcome.findings);
    outcome.submission_time = times.submission;
    outcome.reference_time = times.reference;
    if (times.baseline) {
      outcome.baseline_time = times.baseline;
      outcome.baseline_name = "CUB DeviceReduce::Sum";
    }
    outcome.timed_n = n;
    outcome.bytes_read_per_launch = static_cast<double>(n) * sizeof(float);
  }

  void launch_once_for_tools(ContractContext& context, std::int64_t n, const LoadedKernel& kernel,
                             const LaunchMarks& marks) override {
    // A profiler replays these launches many times: the data is made once per size, and each
    // launch gets a fresh copy of it from the device (a kernel that wrote its input cannot skew
    // the next pass). Buffers are exactly n long so memcheck sees any read past X.
    if (tool_n_ != n) {
      // Made in the worker's kept pages (the tests are over by now), on a few threads: 2^26 values
      // on reduction/6, inside the GPU's turn alone when profiled.
      const std::span<float> host(host_x_.at_least(static_cast<std::size_t>(n)).data(),
                                  static_cast<std::size_t>(n));
      fill_data(DataKind::kExact, host, case_seed(context.seed, "tools", n));
      tool_pristine_ = DeviceBuffer<float>(host.size());
      tool_x_ = DeviceBuffer<float>(host.size());
      tool_out_ = DeviceBuffer<float>(output_count(context, n));
      if (two_kernels_)
        tool_partial_ = DeviceBuffer<float>(static_cast<std::size_t>(grid_blocks(context, n)));
      context.gpu.upload(tool_pristine_.get(), host.data(), tool_pristine_.bytes());
      // Exact data: every right answer is one bit pattern (the sums stay below 2^24).
      tool_expected_ = exact_float_sums(host, partial_ ? context.stage.launch.threads_per_block : 0,
                                        output_count(context, n));
      tool_n_ = n;
    }
    const DeviceBuffer<float>& x = tool_x_;
    const DeviceBuffer<float>& out = tool_out_;
    context.gpu.copy_async(x.get(), tool_pristine_.get(), x.bytes(), cudaMemcpyDeviceToDevice);
    context.gpu.fill_async(out.get(), 0, out.bytes());
    if (two_kernels_) {
      context.gpu.fill_async(tool_partial_.get(), 0, tool_partial_.bytes());
    }
    context.gpu.sync_judge();
    if (marks.before) marks.before();
    try {
      // A tool watching the submission sees both of its kernels; the reference's second kernel goes
      // with the reference.
      const LoadedKernel* second =
          &kernel == &context.reference ? context.reference_second : context.submission_second;
      launch_kernels(context, kernel, second, x.get(), tool_partial_.get(), out.get(), n);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), std::string("launching the submission: ") + error.what());
    }
    context.gpu.sync_learner(fmt::format("the kernel at n={}", n));
  }

  std::optional<bool> tool_answer_right(ContractContext& context) override {
    if (tool_n_ < 0) return std::nullopt;
    std::vector<float> got(tool_expected_.size());
    context.gpu.download(got.data(), tool_out_.get(), got.size() * sizeof(float));
    return got == tool_expected_;
  }

 private:
  std::int64_t tool_n_ = -1;
  std::vector<float> tool_expected_;
  DeviceBuffer<float> tool_pristine_;
  DeviceBuffer<float> tool_x_;
  DeviceBuffer<float> tool_out_;
  DeviceBuffer<float> tool_partial_;

  // partial_per_block: one output per block; otherwise one total.
  std::size_t output_count(const ContractContext& context, std::int64_t n) const {
    return partial_ ? static_cast<std::size_t>(grid_blocks(context, n)) : 1;
  }

  // The inexact data set a deterministic stage is held to (random_signed when it lists it).
  static DataKind inexact_data(const Stage& stage) {
    for (const auto& name : stage.data_sets) {
      const auto kind = parse_data_kind(name);
      if (kind && *kind == DataKind::kRandomSigned) return *kind;
    }
    for (const auto& name : stage.data_sets) {
      const auto kind = parse_data_kind(name);
      if (kind && !is_exact(*kind)) return *kind;
    }
    return DataKind::kRandomSigned;
  }

  // CUB's sum of the same X, into its own output, in the timing rotation.
  TimedKernel cub_baseline(ContractContext& context, std::int64_t n) {
    if (!cub_scratch_.get()) {
      cub_scratch_bytes_ = cub_sum_scratch_bytes(static_cast<std::size_t>(n));
      cub_scratch_ = DeviceBuffer<char>(std::max<std::size_t>(cub_scratch_bytes_, 1));
      cub_out_ = DeviceBuffer<float>(1);
    }
    return TimedKernel{[] {},
                       [this, &context, n] {
                         launch_cub_sum(x_.get(), cub_out_.get(), static_cast<std::size_t>(n),
                                        cub_scratch_.get(), cub_scratch_bytes_, context.gpu.stream());
                       },
                       false,
                       {}};
  }

  DeviceBuffer<char> cub_scratch_;
  std::size_t cub_scratch_bytes_ = 0;
  DeviceBuffer<float> cub_out_;

  void allocate(ContractContext& context) {
    if (x_.get()) return;
    std::int64_t max_n = context.stage.performance_size;
    for (auto n : context.stage.test_sizes) max_n = std::max(max_n, n);
    x_ = DeviceBuffer<float>(static_cast<std::size_t>(max_n + kGuardElements));
    x_pristine_ = DeviceBuffer<float>(x_.count());
    host_x_.at_least(x_.count());
    const std::size_t outputs = output_count(context, max_n);
    out_ = DeviceBuffer<float>(outputs);
    float unwritten;
    std::memcpy(&unwritten, &kUnwrittenPartialBits, sizeof unwritten);
    const std::size_t partials = two_kernels_ ? static_cast<std::size_t>(grid_blocks(context, max_n)) : 0;
    if (two_kernels_) partial_slots_ = DeviceBuffer<float>(partials);
    unwritten_pattern_.assign(std::max(outputs, partials), unwritten);
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

  // Resets the output: zero for an accumulator, the unwritten marker for partials (and for both of
  // a two-kernel sum's buffers: each must be written, not added to).
  void reset_output(ContractContext& context, std::int64_t n) {
    if (two_kernels_) {
      context.gpu.copy_async(partial_slots_.get(), unwritten_pattern_.data(),
                             static_cast<std::size_t>(grid_blocks(context, n)) * sizeof(float),
                             cudaMemcpyHostToDevice);
      context.gpu.copy_async(out_.get(), unwritten_pattern_.data(), sizeof(float), cudaMemcpyHostToDevice);
    } else if (partial_) {
      context.gpu.copy_async(out_.get(), unwritten_pattern_.data(),
                             static_cast<std::size_t>(grid_blocks(context, n)) * sizeof(float),
                             cudaMemcpyHostToDevice);
    } else {
      context.gpu.fill_async(out_.get(), 0, sizeof(float));
    }
  }

  void launch_kernel(ContractContext& context, const LoadedKernel& kernel, std::int64_t n) {
    const LoadedKernel* second =
        &kernel == &context.reference ? context.reference_second : context.submission_second;
    launch_kernels(context, kernel, second, x_.get(), partial_slots_.get(), out_.get(), n);
  }

  // One launch of the contract: the kernel on the stage's grid, then (two-kernel sums) the fold on
  // one block. The arrays' lengths are what each kernel may touch (a Numba kernel sees them as
  // X.shape[0]): the guard region and unused partial slots are not the kernel's.
  void launch_kernels(ContractContext& context, const LoadedKernel& kernel, const LoadedKernel* second,
                      const float* x, float* partials, float* out, std::int64_t n) {
    const auto& launch = context.stage.launch;
    const int blocks = grid_blocks(context, n);
    if (two_kernels_) {
      if (!second) throw std::logic_error("a two-kernel contract launched without its second kernel");
      const KernelArgument first_args[] = {KernelArgument::array(x, n, sizeof(float)),
                                           KernelArgument::array(partials, blocks, sizeof(float)),
                                           KernelArgument::scalar(static_cast<int>(n))};
      kernel.launch(dim3(blocks), dim3(launch.threads_per_block), launch.dynamic_shared_bytes, first_args,
                    context.gpu.stream());
      const KernelArgument second_args[] = {KernelArgument::array(partials, blocks, sizeof(float)),
                                            KernelArgument::array(out, 1, sizeof(float)),
                                            KernelArgument::scalar(blocks)};
      second->launch(dim3(1), dim3(launch.threads_per_block), launch.dynamic_shared_bytes, second_args,
                     context.gpu.stream());
      return;
    }
    const std::int64_t outputs = partial_ ? blocks : 1;
    const KernelArgument args[] = {KernelArgument::array(x, n, sizeof(float)),
                                   KernelArgument::array(out, outputs, sizeof(float)),
                                   KernelArgument::scalar(static_cast<int>(n))};
    kernel.launch(dim3(blocks), dim3(launch.threads_per_block), launch.dynamic_shared_bytes, args,
                  context.gpu.stream());
  }

  // One learner launch under a shared-memory pattern; returns the output buffer. `noise_seed`: run it
  // beside the judge's noise kernel (a stage that demands determinism).
  std::vector<float> run_submission(ContractContext& context, std::int64_t n, float shared_pattern,
                                    std::string_view what, std::optional<std::uint32_t> noise_seed = {}) {
    reset_output(context, n);
    context.gpu.poison_shared(shared_pattern);
    context.gpu.sync_judge();
    if (noise_seed) context.gpu.start_noise(*noise_seed);
    try {
      launch_kernel(context, context.submission, n);
    } catch (const CudaError& error) {
      throw LearnerFault(error.name(), fmt::format("launching the submission at {}: {}", what, error.what()));
    }
    context.gpu.sync_learner(fmt::format("the submission at {}", what));
    if (noise_seed) context.gpu.wait_noise();
    std::vector<float> result(output_count(context, n));
    context.gpu.download(result.data(), out_.get(), result.size() * sizeof(float));
    return result;
  }

  void judge(ContractContext& context, DataKind kind, std::int64_t n, const std::vector<float>& result,
             ContractOutcome& outcome) {
    float_sum_internal::judge_result(context.stage, kind,
                                     std::span<const float>(host_x_.data(), static_cast<std::size_t>(n)),
                                     result, partial_, two_kernels_, outcome);
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
    {
      // The three launches below ask for the GPU alone once, not once each.
      GpuSession::PlantingSpan span(context.gpu);
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
    }

    // X as the host made it goes up only after the last launch (a copy the kernel could reach
    // would be a copy it could rewrite), and is compared there as bits (a NaN is no change).
    const std::size_t words = static_cast<std::size_t>(n + kGuardElements);
    context.gpu.upload(x_pristine_.get(), host_x_.data(), words * sizeof(float));
    const auto changed = context.gpu.count_changed_words(x_.get(), x_pristine_.get(), words);
    add_input_findings(n, changed.first, changed.changed, outcome.findings);
  }

  void determinism(ContractContext& context, DataKind kind, ContractOutcome& outcome) {
    const std::int64_t n = context.stage.performance_size;
    upload_case(context, kind, n, kGuardQuiet);
    std::vector<std::uint64_t> prints;
    DeterminismResult result{std::string(to_string(kind)), n, context.stage.runs, 0, 0, 0};
    // A stage that demands the same bits every run gets them checked on a busy GPU too: every other
    // run goes beside the judge's noise kernel, so an order of float atomics that only repeats on
    // an idle GPU shows.
    SplitMix64 noise(case_seed(context.seed, "noise", n));
    for (int run = 0; run < context.stage.runs; ++run) {
      std::optional<std::uint32_t> noise_seed;
      if (context.stage.deterministic && run % 2 == 1) noise_seed = static_cast<std::uint32_t>(noise.next());
      auto output = run_submission(
          context, n, kSharedPoisonLoud,
          fmt::format("{} (determinism run {})", describe_test(to_string(kind), n), run + 1), noise_seed);
      prints.push_back(fingerprint(output));
      double value = 0;
      for (float v : output) value += v;
      result.min = run == 0 ? value : std::min(result.min, value);
      result.max = run == 0 ? value : std::max(result.max, value);
    }
    result.distinct = count_distinct(prints);
    outcome.determinism.push_back(result);
    if (is_exact(kind)) {
      add_determinism_findings(n, prints, outcome.findings);
    } else if (context.stage.deterministic && result.distinct > 1) {
      outcome.findings.add(
          finding_code::kNondeterministic,
          fmt::format("{} runs on the same {} data (half of them beside other work on the GPU) "
                      "gave {} different sums (from {:.9g} to {:.9g}): this stage asks for the "
                      "same bits every run, so the order of the additions must be fixed; float "
                      "atomics add in whatever order threads arrive",
                      context.stage.runs, to_string(kind), result.distinct, result.min, result.max),
          n);
    }
  }

  TimedKernel timed(ContractContext& context, const LoadedKernel& kernel, std::int64_t n, bool learner) {
    return TimedKernel{[this, &context, n] { reset_output(context, n); },
                       [this, &context, &kernel, n] { launch_kernel(context, kernel, n); },
                       learner,
                       {}};
  }

  bool partial_;
  bool two_kernels_;
  DeviceBuffer<float> partial_slots_;  // two_kernel_sum: the first kernel's per-block sums
  DeviceBuffer<float> x_;
  DeviceBuffer<float> out_;
  DeviceBuffer<float> x_pristine_;
  KeptHostBuffer<float> host_x_;
  std::vector<float> unwritten_pattern_;
};

}  // namespace

std::unique_ptr<ContractDriver> make_float_sum_driver(bool partial_per_block) {
  return std::make_unique<FloatSumDriver>(partial_per_block ? FloatSumShape::kPartialPerBlock
                                                            : FloatSumShape::kOneAccumulator);
}

std::unique_ptr<ContractDriver> make_two_kernel_sum_driver() {
  return std::make_unique<FloatSumDriver>(FloatSumShape::kTwoKernels);
}

}  // namespace cudojo

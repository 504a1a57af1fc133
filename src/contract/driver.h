// The GPU side of a contract: how the host drives a kernel of that contract, checks it and times it.
// Written once per contract; a stage names one and supplies sizes, data and gate as data.
// Runs in the worker only. Learner faults surface as LearnerFault; anything else is the judge's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "check/outcome.h"
#include "gpu/gpu.h"
#include "measure/profiler.h"
#include "measure/stats.h"
#include "report/report.h"
#include "stage/stage.h"

namespace cudojo {

// How the driver tells the parent what it is about to do, so the parent can set the time limit.
class PhaseAnnouncer {
 public:
  virtual ~PhaseAnnouncer() = default;
  virtual void reference_time(double ms) = 0;
  virtual void phase(std::string_view name, int launches) = 0;
};

struct ContractContext {
  const Stage& stage;
  GpuSession& gpu;
  const LoadedKernel& submission;
  const LoadedKernel& reference;
  std::uint64_t seed;
  PhaseAnnouncer& announce;
  // The second kernels of a two-kernel contract (nullptr otherwise).
  const LoadedKernel* submission_second = nullptr;
  const LoadedKernel* reference_second = nullptr;
};

struct ContractOutcome {
  std::vector<TestResult> tests;
  FindingSet findings;
  std::vector<DeterminismResult> determinism;
  std::optional<TimeStats> submission_time;
  std::optional<TimeStats> reference_time;
  // A library baseline timed in the same rotation (gate.rule = baseline_ratio).
  std::optional<TimeStats> baseline_time;
  std::string baseline_name;
  std::int64_t timed_n = 0;
  double bytes_read_per_launch = 0;  // 0: the contract reads no input (bandwidth is meaningless)
};

class ContractDriver {
 public:
  virtual ~ContractDriver() = default;
  // The reference alone at the performance size, before any learner code runs: its median sets
  // the time limits for the phases that follow.
  virtual double time_reference(ContractContext& context) = 0;
  // Every test case, poisoning variants and determinism runs.
  virtual void run_tests(ContractContext& context, ContractOutcome& outcome) = 0;
  // Interleaved timing of submission and reference at the performance size.
  virtual void measure(ContractContext& context, ContractOutcome& outcome) = 0;
  // One launch of `kernel` (the submission or the reference) on exact data of size n, in buffers
  // of exactly that size (no guard region, no poisoning): what a sanitizer, a profiler or the
  // barrier check watches. `marks.before` runs right before the launch.
  virtual void launch_once_for_tools(ContractContext& context, std::int64_t n, const LoadedKernel& kernel,
                                     const LaunchMarks& marks) = 0;
  // Whether the last launch_once_for_tools answered right for its data: a profiler's replayed
  // launches and the check build's launch are judged too, so a kernel cannot behave only when no
  // answer is read. Nullopt when the contract cannot tell (the default).
  virtual std::optional<bool> tool_answer_right(ContractContext& context) {
    (void)context;
    return std::nullopt;
  }
};

std::unique_ptr<ContractDriver> make_contract_driver(std::string_view contract);

// The stage's grid at size n on this GPU: a fixed count, a count per SM, or ceil(n / threads).
inline int grid_blocks(const ContractContext& context, std::int64_t n) {
  const LaunchShape& launch = context.stage.launch;
  if (launch.fixed_blocks) return *launch.fixed_blocks;
  if (launch.blocks_per_sm) return *launch.blocks_per_sm * std::max(1, context.gpu.info().sm_count);
  return static_cast<int>((n + launch.threads_per_block - 1) / launch.threads_per_block);
}

// Per-case seed: fresh per run (from the job's seed) yet reproducible from it.
std::uint64_t case_seed(std::uint64_t run_seed, std::string_view data, std::int64_t n);

}  // namespace cudojo

namespace cudojo {
std::unique_ptr<ContractDriver> make_counter_driver();
// one_accumulator (partial_per_block = false) and partial_per_block share one driver: the same
// input, poisoning and timing; they differ in the output buffer and how it is judged.
std::unique_ptr<ContractDriver> make_float_sum_driver(bool partial_per_block);
// two_kernel_sum: the float-sum driver with a partials kernel and a fold kernel.
std::unique_ptr<ContractDriver> make_two_kernel_sum_driver();
// The exact contracts (contract/exact_driver.cc): u64_sum, histogram, float_max.
std::unique_ptr<ContractDriver> make_exact_driver(std::string_view contract);
}  // namespace cudojo

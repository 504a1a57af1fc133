// Pure judgement: given what a kernel produced under the driver's variations, decide the test
// results and findings. No GPU here, so every rule is unit-tested with made-up observations.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check/datasets.h"
#include "check/outcome.h"

namespace cudojo {

// Bit patterns the driver writes where the learner must not look, chosen so a sum that reads them
// lands far from any right answer and differs between the two.
inline constexpr float kSharedPoisonA = 3.0e6f;
inline constexpr float kSharedPoisonB = -7.0e5f;
inline constexpr float kGuardPoisonA = 5.0e5f;
inline constexpr float kGuardPoisonB = -2.5e5f;
// partial[] is filled with a quiet NaN carrying this payload: a slot still holding it was never written.
inline constexpr std::uint32_t kUnwrittenPartialBits = 0x7FC0DEADu;

std::string describe_test(std::string_view data, std::int64_t n);

// One total compared with its reference: bitwise on exact data, by the tolerance rule otherwise.
TestResult judge_total(std::string_view data, std::int64_t n, bool exact, float got, const ReferenceSum& ref);

// The counter contract: every increment must survive.
TestResult judge_count(int run, std::int64_t expected, std::int64_t got);
void add_count_findings(std::span<const std::int64_t> counts, std::int64_t expected, FindingSet& findings);

// Results of one exact-data case run three ways: shared memory poisoned with pattern A, with
// pattern B, and the guard region after X changed. A correct kernel gives one bit pattern.
// For an accumulator each result holds one value; for partials, one value per block.
struct PoisonRuns {
  std::vector<float> shared_a;
  std::vector<float> shared_b;
  std::vector<float> guard_b;
};
void add_poison_findings(std::int64_t n, const PoisonRuns& runs, FindingSet& findings);

// X (and its guard) read back after the launches; a difference means the kernel wrote its input.
void add_input_findings(std::int64_t n, std::int64_t first_changed_index, std::int64_t changed,
                        FindingSet& findings);

// partial[] after a partial_per_block launch.
struct PartialAnalysis {
  std::int64_t blocks = 0;
  std::int64_t unwritten = 0;        // slots still holding kUnwrittenPartialBits
  std::int64_t wrong = 0;            // written slots with the wrong value
  std::int64_t first_bad_block = -1;
  double first_bad_expected = 0;
  double first_bad_got = 0;
  bool slot0_holds_total = false;    // partial[0] equals the whole array's sum (and blocks > 1)
  double host_total = 0;             // what the host gets adding the written partials
};
PartialAnalysis analyse_partials(std::span<const float> partial, std::span<const ReferenceSum> per_block,
                                 bool exact, const ReferenceSum& total);
TestResult judge_partials(std::string_view data, std::int64_t n, const PartialAnalysis& analysis,
                          const ReferenceSum& total);
void add_partial_findings(std::int64_t n, const PartialAnalysis& analysis, FindingSet& findings);

// Exact data, same input, several runs: every run must give the same bits. Each run's result is
// reduced to a fingerprint of its bits (one float, or a whole partial[] array).
void add_determinism_findings(std::int64_t n, std::span<const std::uint64_t> fingerprints,
                              FindingSet& findings);
int count_distinct(std::span<const std::uint64_t> fingerprints);
std::uint64_t fingerprint(std::span<const float> values);

std::uint32_t float_bits(float value);

}  // namespace cudojo

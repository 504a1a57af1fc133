// Pure judgement: given what a kernel produced under the driver's variations, decide the test
// results and findings. No GPU here, so every rule is unit-tested with made-up observations.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "check/datasets.h"
#include "check/outcome.h"

namespace cudojo {

// Values the driver plants where the learner must not look. "Loud" values are powers of two so
// large (2^40, 2^41) that a sum that read even one of them is unmistakable, whatever else it read;
// "quiet" values are ordinary numbers, like the zeros a real GPU often leaves there by chance, but
// not zero, so that a kernel that reads them is still wrong.
inline constexpr float kSharedPoisonLoud = 1099511627776.0f;  // 2^40
inline constexpr float kSharedPoisonQuiet = -3.0f;
inline constexpr float kGuardLoud = 2199023255552.0f;  // 2^41
inline constexpr float kGuardQuiet = 1000.0f;
// Any result at least this large (2^39) must contain a loud value: exact data sums stay below 2^24.
inline constexpr double kLoudThreshold = 549755813888.0;
// partial[] is filled with a quiet NaN carrying this payload: a slot still holding it was never written.
inline constexpr std::uint32_t kUnwrittenPartialBits = 0x7FC0DEADu;

std::string describe_test(std::string_view data, std::int64_t n);

// One total compared with its reference: bitwise on exact data, by the tolerance rule otherwise.
TestResult judge_total(std::string_view data, std::int64_t n, bool exact, float got, const ReferenceSum& ref);

// The counter contract: every increment must survive.
TestResult judge_count(int run, std::int64_t expected, std::int64_t got);
void add_count_findings(std::span<const std::int64_t> counts, std::int64_t expected, FindingSet& findings);

// One exact-data case launched under different plantings. A correct kernel gives the same bits in
// all of them. For an accumulator each result holds one value; for partials, one per block.
struct PoisonRuns {
  std::vector<float> shared_loud;   // shared memory loud, guard quiet (the judged launch)
  std::vector<float> shared_quiet;  // shared memory quiet, guard quiet
  std::vector<float> guard_loud;    // shared memory quiet, guard loud
};
// uninitialized_shared: the answer is loud under the loud shared pattern and quiet under the quiet
// one. out_of_bounds: the loud guard launch came out loud. Magnitudes, not mere differences, decide,
// because a racing kernel (or one reading another block's stale slots) differs between any two
// launches; the repeated launch reports that as nondeterministic.
void add_poison_findings(std::int64_t n, const PoisonRuns& runs, FindingSet& findings);

// X (and its guard) read back after the launches; a difference means the kernel wrote its input.
void add_input_findings(std::int64_t n, std::int64_t first_changed_index, std::int64_t changed,
                        FindingSet& findings);

// partial[] after a partial_per_block launch.
struct PartialAnalysis {
  std::int64_t blocks = 0;
  std::int64_t unwritten = 0;  // slots still holding kUnwrittenPartialBits
  std::int64_t wrong = 0;      // written slots with the wrong value
  std::int64_t first_bad_block = -1;
  double first_bad_expected = 0;
  double first_bad_got = 0;
  bool slot0_holds_total = false;  // partial[0] equals the whole array's sum (and blocks > 1)
  double host_total = 0;           // what the host gets adding the written partials
};
PartialAnalysis analyse_partials(std::span<const float> partial, std::span<const ReferenceSum> per_block,
                                 bool exact, const ReferenceSum& total);
TestResult judge_partials(std::string_view data, std::int64_t n, const PartialAnalysis& analysis,
                          const ReferenceSum& total);
void add_partial_findings(std::int64_t n, const PartialAnalysis& analysis, FindingSet& findings);

// The timed launches: before each of the submission's, the input changed where the kernel cannot
// predict it (outside the timed region), and each result was checked against what the input then
// held. `wrong` of `launches` disagreed; the first at launch `first_wrong` (0-based).
struct TimedResults {
  int launches = 0;
  int wrong = 0;
  int first_wrong = -1;
  double first_expected = 0;
  double first_got = 0;
};
void record_timed_result(TimedResults& results, double expected, double got, bool ok);
void add_stale_answer_findings(std::int64_t n, const TimedResults& results, FindingSet& findings);

// The counter contract, against a kernel that writes its answer instead of counting: the counter
// starts at `start` (not zero), and a launch on another grid must grow it by that grid's threads.
// `ended_at`: the value after a launch that began at `start` on the stage's grid of `threads`.
void add_constant_count_findings(std::int64_t start, std::int64_t threads, std::int64_t ended_at,
                                 std::int64_t other_grid_threads, std::int64_t other_grid_increase,
                                 FindingSet& findings);

// Exact data, same input, several runs: every run must give the same bits. Each run's result is
// reduced to a fingerprint of its bits (one float, or a whole partial[] array).
void add_determinism_findings(std::int64_t n, std::span<const std::uint64_t> fingerprints,
                              FindingSet& findings);
int count_distinct(std::span<const std::uint64_t> fingerprints);
std::uint64_t fingerprint(std::span<const float> values);

std::uint32_t float_bits(float value);

// A median time shorter than reading the input at the GPU's measured peak allows cannot be real:
// the kernel skipped work (or the timer saw nothing). The margin covers kernels that read a
// little faster than the judge's own bandwidth probe.
inline constexpr double kSpeedOfLightMargin = 1.15;
std::optional<Finding> speed_of_light_finding(double bytes, double median_ms, double peak_gbps);

}  // namespace cudojo

// Judgement for the contracts whose every answer is exact whatever the order of the kernel's
// updates: a 64-bit sum of unsigned values, a 256-bin histogram, a float max. Pure functions of
// what the kernel produced, so each rule is unit-tested with made-up results.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "check/datasets.h"
#include "check/outcome.h"

namespace cudojo {

inline constexpr std::size_t kHistogramBins = 256;
using Histogram = std::array<std::uint32_t, kHistogramBins>;

std::uint64_t expected_u64_sum(std::span<const std::uint32_t> values);
TestResult judge_u64_sum(std::string_view data, std::int64_t n, std::uint64_t expected, std::uint64_t got);
// overflow: the low 32 bits agree, so the kernel's arithmetic wrapped at 2^32 somewhere.
void add_u64_sum_findings(std::int64_t n, std::uint64_t expected, std::uint64_t got, FindingSet& findings);

Histogram expected_histogram(std::span<const std::uint32_t> values);
TestResult judge_histogram(std::string_view data, std::int64_t n, const Histogram& expected,
                           std::span<const std::uint32_t> got);
// lost_updates: fewer counts than values and no bin above its count (a plain `+= 1` race).
void add_histogram_findings(std::int64_t n, const Histogram& expected, std::span<const std::uint32_t> got,
                            FindingSet& findings);

// The float_max rule: NaN values are skipped (all NaN, or none at all: -infinity), and +0.0 counts
// as larger than -0.0. The answer is compared bit for bit.
float expected_max(std::span<const float> values);
TestResult judge_max(std::string_view data, std::int64_t n, float expected, float got);
// nan_rule: a NaN reached *out. signed_zero: -0.0 where +0.0 was present (or the reverse).
void add_max_findings(std::int64_t n, float expected, float got, FindingSet& findings);

// The right answers of exact float data (small integers, fill_data's kExact), whose sums in
// doubles are the same in any order: one total, or (block_size > 0) one per block of that many
// values, `outputs` of them. Made on a few threads (check/parallel_chunks.h): up to 2^26 values.
std::vector<float> exact_float_sums(std::span<const float> data, int block_size, std::size_t outputs);

// The exact contracts' timed input (contract/exact_driver.cc). Before each of the submission's
// timed launches, change_one() changes one element of X and updates the right answer from it; the
// driver uploads that one element, outside the timed region, and checks the launch against the
// answer. Every change moves the answer, and where it lands cannot be read from a sample of X, so
// a kernel that replays an answer it kept from an earlier launch is wrong on every timed launch.

// u64_sum and histogram: an element drawn at random takes changed_unsigned_value (check/datasets.h):
// the sum moves by after - before (never 0; unsigned 64-bit arithmetic wraps as the kernel's total
// does), and one count leaves the element's bin for a bin drawn at random.
class ChangingUnsignedInput {
 public:
  ChangingUnsignedInput(std::span<std::uint32_t> values, UnsignedDataKind kind);
  // Returns the index changed.
  std::size_t change_one(SplitMix64& random);
  std::uint64_t sum() const { return sum_; }
  const Histogram& histogram() const { return histogram_; }

 private:
  std::span<std::uint32_t> values_;
  UnsignedDataKind kind_;
  std::uint64_t sum_;
  Histogram histogram_;
};

// float_max: a coin decides, each launch, between
//   raise: an element drawn at random becomes the new maximum, 2^-10 to 2^-9 of its magnitude above
//          the old one (above -0.0: +0.0; above +0.0: 2^-20 to 2^-19), and
//   lower: the element holding the maximum takes a fresh value of the data set below it (or one
//          just below it), so the answer falls to the next largest value; when another element
//          holds the same maximum, that would move nothing, and the raise is taken instead.
// Raises put the answer at a place no sample predicts; lowers bring it back down, so over hundreds
// of launches the maximum stays near the data set's own. The maximum after a change is found from
// the largest element of each run of kRun elements, so a change costs two runs' worth of
// comparisons, not a pass over X.
class ChangingMax {
 public:
  ChangingMax(std::span<float> values, DataKind kind);
  // Returns the index changed.
  std::size_t change_one(SplitMix64& random);
  // expected_max of the values as they now are, bit for bit.
  float expected() const;

 private:
  static constexpr std::size_t kRun = 2048;
  std::size_t best_in_run(std::size_t run) const;
  void find_best();  // best_ from run_best_
  void changed(std::size_t i);
  bool try_lower(SplitMix64& random, std::size_t& changed_index);
  bool try_raise(SplitMix64& random, std::size_t& changed_index);

  std::span<float> values_;
  DataKind kind_;
  std::vector<std::size_t> run_best_;  // (runs,) the index of each run's largest element by the rule
  std::size_t best_ = 0;               // the index of the first element holding the maximum
};

// The precision bound of a stage (|error| / |sum|), beside the course's tolerance rule.
// imprecise: the error passes the bound although the answer may be within the general rule.
struct PrecisionCheck {
  double relative_error = 0;
  bool ok = false;
};
PrecisionCheck check_relative_error(double got, double reference, double max_relative_error);

// A fingerprint of any result's bytes, to compare repeated launches.
std::uint64_t fingerprint_bytes(std::span<const std::byte> bytes);

}  // namespace cudojo

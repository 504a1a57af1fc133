#include "check/exact_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "check/findings.h"
#include "check/parallel_chunks.h"

namespace cudojo {

std::uint64_t expected_u64_sum(std::span<const std::uint32_t> values) {
  // Integer sums: the chunks' totals add to the same answer in any order.
  std::array<std::uint64_t, kMaxChunks> totals{};
  for_each_chunk(values.size(), 1, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    std::uint64_t total = 0;
    for (std::size_t i = begin; i < end; ++i) total += values[i];
    totals[chunk] = total;
  });
  std::uint64_t total = 0;
  for (const auto part : totals) total += part;
  return total;
}

TestResult judge_u64_sum(std::string_view data, std::int64_t n, std::uint64_t expected, std::uint64_t got) {
  // The report's expected/got are doubles; the detail keeps every digit.
  return {describe_test(data, n),
          n,
          std::string(data),
          static_cast<double>(expected),
          static_cast<double>(got),
          got == expected,
          fmt::format("exact: expected {}, got {}", expected, got)};
}

void add_u64_sum_findings(std::int64_t n, std::uint64_t expected, std::uint64_t got, FindingSet& findings) {
  if (got == expected) return;
  if (expected >= (1ull << 32) && (got & 0xFFFFFFFFull) == (expected & 0xFFFFFFFFull)) {
    findings.add(finding_code::kOverflow,
                 fmt::format("the answer's low 32 bits are right but it lost {} x 2^32: a 32-bit value "
                             "wrapped somewhere (a partial sum, a shuffle or the atomic itself); widen each "
                             "element to unsigned long long before adding",
                             (expected - got) >> 32),
                 n);
    return;
  }
  if (got < expected && expected - got < (1ull << 32) && got < (1ull << 32) && expected >= (1ull << 32)) {
    findings.add(finding_code::kOverflow,
                 fmt::format("expected {}, got {}: the total passes 2^32 and the answer does not; a 32-bit "
                             "value wrapped on the way",
                             expected, got),
                 n);
    return;
  }
  findings.add(finding_code::kWrongValue, fmt::format("expected {}, got {}", expected, got), n);
}

Histogram expected_histogram(std::span<const std::uint32_t> values) {
  std::array<Histogram, kMaxChunks> parts{};
  for_each_chunk(values.size(), 1, [&](std::size_t chunk, std::size_t begin, std::size_t end) {
    Histogram& bins = parts[chunk];
    for (std::size_t i = begin; i < end; ++i) ++bins[values[i] % kHistogramBins];
  });
  Histogram bins{};
  for (const auto& part : parts) {
    for (std::size_t b = 0; b < kHistogramBins; ++b) bins[b] += part[b];
  }
  return bins;
}

TestResult judge_histogram(std::string_view data, std::int64_t n, const Histogram& expected,
                           std::span<const std::uint32_t> got) {
  TestResult test{describe_test(data, n), n, std::string(data), 0, 0, false, ""};
  std::int64_t wrong = 0, first = -1;
  std::uint64_t counted = 0;
  for (std::size_t b = 0; b < kHistogramBins; ++b) {
    const std::uint32_t value = b < got.size() ? got[b] : 0;
    counted += value;
    if (value != expected[b]) {
      ++wrong;
      if (first < 0) first = static_cast<std::int64_t>(b);
    }
  }
  test.ok = wrong == 0 && got.size() == kHistogramBins;
  if (test.ok) {
    test.expected = static_cast<double>(n);
    test.got = static_cast<double>(counted);
    test.detail = "all 256 bins exact";
  } else {
    const auto b = static_cast<std::size_t>(first < 0 ? 0 : first);
    test.expected = expected[b];
    test.got = b < got.size() ? got[b] : 0;
    test.detail =
        fmt::format("{} of 256 bins wrong, first bin {}: expected {}, got {}; {} counted for {} values",
                    wrong, b, expected[b], test.got, counted, n);
  }
  return test;
}

void add_histogram_findings(std::int64_t n, const Histogram& expected, std::span<const std::uint32_t> got,
                            FindingSet& findings) {
  std::uint64_t counted = 0;
  bool any_above = false, any_wrong = false;
  for (std::size_t b = 0; b < kHistogramBins && b < got.size(); ++b) {
    counted += got[b];
    any_above = any_above || got[b] > expected[b];
    any_wrong = any_wrong || got[b] != expected[b];
  }
  if (!any_wrong) return;
  if (!any_above && counted < static_cast<std::uint64_t>(n)) {
    findings.add(
        finding_code::kLostUpdates,
        fmt::format("the bins hold {} counts for {} values, none too many: counts were lost. A plain "
                    "`bins[b] += 1` (threads of one bin overwrite each other: use atomicAdd), a merge "
                    "that assigns instead of adding, a merge before every count is in, or values never "
                    "visited (the grid is fixed: loop with a grid stride) all look like this",
                    counted, n),
        n);
    return;
  }
  findings.add(
      finding_code::kWrongValue,
      fmt::format("the bins hold {} counts for {} values, and some bins hold more than their values: "
                  "counts landed in the wrong bin (bin = value % 256) or came from somewhere else",
                  counted, n),
      n);
}

namespace {

// The rule's order: NaN below everything (so it never wins), then the usual order, with -0.0
// below +0.0.
bool max_rule_greater(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  if (a == 0.0f && b == 0.0f) return !std::signbit(a) && std::signbit(b);
  return a > b;
}

}  // namespace

float expected_max(std::span<const float> values) {
  float best = -std::numeric_limits<float>::infinity();
  for (const float v : values) {
    if (max_rule_greater(v, best)) best = v;
  }
  return best;
}

TestResult judge_max(std::string_view data, std::int64_t n, float expected, float got) {
  return {describe_test(data, n),
          n,
          std::string(data),
          expected,
          got,
          std::bit_cast<std::uint32_t>(expected) == std::bit_cast<std::uint32_t>(got),
          fmt::format("bitwise: expected {:g} (0x{:08x}), got {:g} (0x{:08x})", expected,
                      std::bit_cast<std::uint32_t>(expected), got, std::bit_cast<std::uint32_t>(got))};
}

void add_max_findings(std::int64_t n, float expected, float got, FindingSet& findings) {
  if (std::bit_cast<std::uint32_t>(expected) == std::bit_cast<std::uint32_t>(got)) return;
  if (std::isnan(got)) {
    findings.add(finding_code::kNanRule,
                 "a NaN reached *out: the stage's rule skips NaN values (every comparison with NaN is false, "
                 "so a CAS loop that does not test for it first stores it, and then nothing replaces it)",
                 n);
    return;
  }
  if (expected == 0.0f && got == 0.0f) {
    findings.add(
        finding_code::kSignedZero,
        fmt::format("*out ended as {} where the rule wants {}: -0.0 == +0.0 compares true, so a `>` test "
                    "never replaces one by the other; compare the sign (or the bits) when both are zero",
                    std::signbit(got) ? "-0.0" : "+0.0", std::signbit(expected) ? "-0.0" : "+0.0"),
        n);
    return;
  }
  std::string why;
  if (expected < 0 && got > expected) {
    why =
        "; on negative values a larger float has a SMALLER signed-integer bit pattern, so atomicMax on "
        "the bits picks the wrong one";
  } else if (got < expected) {
    why =
        "; a smaller value survived: an update was lost (a plain read-compare-write races) or the CAS "
        "loop gave up too early";
  }
  findings.add(finding_code::kWrongValue, fmt::format("expected {:g}, got {:g}{}", expected, got, why), n);
}

ChangingUnsignedInput::ChangingUnsignedInput(std::span<std::uint32_t> values, UnsignedDataKind kind)
    : values_(values), kind_(kind), sum_(0), histogram_{} {
  for (const auto v : values) {  // one pass for both answers: X is up to 2^26 values
    sum_ += v;
    ++histogram_[v % kHistogramBins];
  }
}

std::size_t ChangingUnsignedInput::change_one(SplitMix64& random) {
  if (values_.empty()) return 0;
  const auto i = static_cast<std::size_t>(random.next() % values_.size());
  const std::uint32_t before = values_[i];
  const std::uint32_t after = changed_unsigned_value(kind_, before, random);
  values_[i] = after;
  sum_ = sum_ - before + after;
  --histogram_[before % kHistogramBins];
  ++histogram_[after % kHistogramBins];
  return i;
}

namespace {

// A float above `x` by the rule, not far above it, in one of 2^24 places: a replay of the old
// maximum, or a guess of the new one, is wrong. Nothing is above +infinity or NaN.
std::optional<float> step_above(float x, SplitMix64& random) {
  const float spread = 1.0f + random.next_unit_float();  // [1, 2)
  if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) return std::nullopt;
  if (x == -std::numeric_limits<float>::infinity()) return spread;
  if (x == 0.0f) return std::signbit(x) ? 0.0f : std::ldexp(spread, -20);
  return x + std::fabs(x) * std::ldexp(spread, -10);  // far more than one ulp, so strictly above
}

// The mirror of step_above. NaN is below everything by the rule, so below -infinity there is NaN.
float step_below(float x, SplitMix64& random) {
  const float spread = 1.0f + random.next_unit_float();
  if (std::isnan(x) || x == -std::numeric_limits<float>::infinity()) return std::nanf("");
  if (x == std::numeric_limits<float>::infinity()) return std::numeric_limits<float>::max();
  if (x == 0.0f) return std::signbit(x) ? -std::ldexp(spread, -20) : -0.0f;
  return x - std::fabs(x) * std::ldexp(spread, -10);
}

}  // namespace

ChangingMax::ChangingMax(std::span<float> values, DataKind kind) : values_(values), kind_(kind) {
  run_best_.resize((values.size() + kRun - 1) / kRun);
  for (std::size_t run = 0; run < run_best_.size(); ++run) run_best_[run] = best_in_run(run);
  find_best();
}

float ChangingMax::expected() const {
  // expected_max starts from -infinity and never takes a NaN: an all-NaN X answers -infinity.
  if (values_.empty() || std::isnan(values_[best_])) return -std::numeric_limits<float>::infinity();
  return values_[best_];
}

std::size_t ChangingMax::best_in_run(std::size_t run) const {
  const std::size_t begin = run * kRun, end = std::min(values_.size(), begin + kRun);
  std::size_t best = begin;
  float best_value = values_[begin];
  for (std::size_t i = begin + 1; i < end; ++i) {
    if (max_rule_greater(values_[i], best_value)) {  // strictly: the first of equal values stays
      best = i;
      best_value = values_[i];
    }
  }
  return best;
}

void ChangingMax::find_best() {
  if (run_best_.empty()) return;
  best_ = run_best_[0];
  for (std::size_t run = 1; run < run_best_.size(); ++run) {
    if (max_rule_greater(values_[run_best_[run]], values_[best_])) best_ = run_best_[run];
  }
}

void ChangingMax::changed(std::size_t i) {
  run_best_[i / kRun] = best_in_run(i / kRun);
  find_best();
}

bool ChangingMax::try_lower(SplitMix64& random, std::size_t& changed_index) {
  const float before = expected();
  const std::size_t i = best_;
  const float kept = values_[i];
  float lowered = next_float_value(kind_, random);
  if (!max_rule_greater(kept, lowered)) lowered = step_below(kept, random);
  values_[i] = lowered;
  changed(i);
  if (float_bits(expected()) != float_bits(before)) {
    changed_index = i;
    return true;
  }
  values_[i] = kept;  // another element holds the same maximum
  changed(i);
  return false;
}

bool ChangingMax::try_raise(SplitMix64& random, std::size_t& changed_index) {
  const std::optional<float> raised = step_above(expected(), random);
  if (!raised) return false;
  const auto i = static_cast<std::size_t>(random.next() % values_.size());
  values_[i] = *raised;
  changed(i);
  changed_index = i;
  return true;
}

std::size_t ChangingMax::change_one(SplitMix64& random) {
  std::size_t i = 0;
  if (values_.empty()) return i;
  const bool lower_first = (random.next() & 1) != 0;
  if (lower_first && try_lower(random, i)) return i;
  if (try_raise(random, i)) return i;
  if (!lower_first && try_lower(random, i)) return i;
  // Only a maximum of +infinity held by two elements gets here (no data set has one): one element
  // changes, and this launch's answer stays.
  i = static_cast<std::size_t>(random.next() % values_.size());
  values_[i] = next_float_value(kind_, random);
  changed(i);
  return i;
}

PrecisionCheck check_relative_error(double got, double reference, double max_relative_error) {
  PrecisionCheck check;
  const double scale = std::fabs(reference);
  check.relative_error = scale > 0 ? std::fabs(got - reference) / scale : std::fabs(got - reference);
  check.ok = std::isfinite(got) && check.relative_error <= max_relative_error;
  return check;
}

std::uint64_t fingerprint_bytes(std::span<const std::byte> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a
  for (const std::byte b : bytes) {
    hash ^= static_cast<std::uint64_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::vector<float> exact_float_sums(std::span<const float> data, int block_size, std::size_t outputs) {
  std::vector<double> sums(outputs, 0.0);
  std::array<double, kMaxChunks> chunk_totals{};
  const std::size_t block = block_size > 0 ? static_cast<std::size_t>(block_size) : 0;
  // Each chunk starts at a block, so every block is summed by one thread.
  for_each_chunk(data.size(), std::max<std::size_t>(block, 1),
                 [&](std::size_t chunk, std::size_t begin, std::size_t end) {
                   if (!block) {
                     double total = 0;
                     for (std::size_t i = begin; i < end; ++i) total += data[i];
                     chunk_totals[chunk] = total;
                     return;
                   }
                   for (std::size_t first = begin; first < end; first += block) {
                     const std::size_t last = std::min(first + block, end);
                     double total = 0;
                     for (std::size_t i = first; i < last; ++i) total += data[i];
                     if (first / block < sums.size()) sums[first / block] = total;
                   }
                 });
  if (!block)
    for (double total : chunk_totals) sums[0] += total;
  return std::vector<float>(sums.begin(), sums.end());
}

}  // namespace cudojo

#include "check/exact_checks.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <limits>

#include "check/findings.h"

namespace cudojo {

std::uint64_t expected_u64_sum(std::span<const std::uint32_t> values) {
  std::uint64_t total = 0;
  for (const auto v : values) total += v;
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
  Histogram bins{};
  for (const auto v : values) ++bins[v % kHistogramBins];
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

}  // namespace cudojo

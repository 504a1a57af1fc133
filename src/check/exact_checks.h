// Judgement for the contracts whose every answer is exact whatever the order of the kernel's
// updates: a 64-bit sum of unsigned values, a 256-bin histogram, a float max. Pure functions of
// what the kernel produced, so each rule is unit-tested with made-up results.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

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

#include "check/datasets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "check/findings.h"
#include "check/tolerance.h"

namespace cudojo {
namespace {

TEST(Datasets, ExactDataIsSmallIntegersWhoseSumIsExactInFloat) {
  std::vector<float> x(4194304);
  fill_data(DataKind::kExact, x, 42);
  double sum = 0;
  int seen[4] = {0, 0, 0, 0};
  for (float v : x) {
    ASSERT_TRUE(v == 0 || v == 1 || v == 2 || v == 3);
    ++seen[static_cast<int>(v)];
    sum += v;
  }
  for (int k = 0; k < 4; ++k) EXPECT_GT(seen[k], 1000000);  // all four values, roughly even
  EXPECT_LT(sum, 16777216.0);                               // below 2^24: every partial sum is exact in float
}

TEST(Datasets, SeedChangesRandomDataAndIsReproducible) {
  std::vector<float> a(1000), b(1000), c(1000);
  fill_data(DataKind::kRandomSigned, a, 1);
  fill_data(DataKind::kRandomSigned, b, 1);
  fill_data(DataKind::kRandomSigned, c, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  bool negative = false, positive = false;
  for (float v : a) {
    EXPECT_GE(v, -0.5f);
    EXPECT_LT(v, 1.5f);
    negative |= v < 0;
    positive |= v > 0;
  }
  EXPECT_TRUE(negative && positive);
}

// The tolerance must be a real test: on signed data at the largest size it is a small fraction of
// the answer (on data centred on zero it was wider than the answer itself).
TEST(Datasets, SignedDataLeavesTheToleranceASmallFractionOfTheSum) {
  for (const std::int64_t n : {1000, 65536, 4194304}) {
    std::vector<float> values(static_cast<std::size_t>(n));
    fill_data(DataKind::kRandomSigned, values, 7);
    const ReferenceSum reference = reference_sum(values);
    const double bound = sum_tolerance(reference.terms, reference.sum_abs);
    EXPECT_LT(bound, 0.01 * std::abs(reference.sum))
        << "n=" << n << " bound " << bound << " sum " << reference.sum;
  }
}

TEST(Datasets, FractionalValuesAreNotAllRepresentable) {
  std::vector<float> x(1000);
  fill_data(DataKind::kFractional, x, 0);
  int inexact = 0;
  for (int i = 0; i < 1000; ++i) inexact += static_cast<double>(x[i]) != 1.0 + i * 0.001;
  EXPECT_GT(inexact, 900);
}

// Float32 replays of the precision stage's kernels (reduction/8), in the order their adds reach
// the big total: one add per element; one per warp of a shuffle fold; one per block of a 256-wide
// shared-memory tree (the reference).
float sum_per_element(std::span<const float> x) {
  float total = 0.0f;
  for (const float v : x) total += v;
  return total;
}

float sum_per_warp(std::span<const float> x) {
  float total = 0.0f;
  for (std::size_t w = 0; w < x.size(); w += 32) {
    float lanes[32];
    for (std::size_t l = 0; l < 32; ++l) lanes[l] = w + l < x.size() ? x[w + l] : 0.0f;
    for (std::size_t offset = 16; offset > 0; offset /= 2) {
      for (std::size_t l = 0; l + offset < 32; ++l) lanes[l] += lanes[l + offset];  // lane 0 needs no more
    }
    total += lanes[0];
  }
  return total;
}

float sum_per_block(std::span<const float> x) {
  float total = 0.0f;
  for (std::size_t b = 0; b < x.size(); b += 256) {
    float s[256];
    for (std::size_t t = 0; t < 256; ++t) s[t] = b + t < x.size() ? x[b + t] : 0.0f;
    for (std::size_t half = 128; half > 0; half /= 2) {
      for (std::size_t t = 0; t < half; ++t) s[t] += s[t + half];
    }
    total += s[0];
  }
  return total;
}

double relative_error(float got, double exact) { return std::abs(got - exact) / std::abs(exact); }

TEST(Datasets, TenthsAreMostlyTenthWithRareWholeTenthsUpToTwentyFivePointSix) {
  std::vector<float> x(1 << 20);
  fill_data(DataKind::kTenths, x, 7);
  std::size_t exceptions = 0;
  for (const float v : x) {
    if (v == 0.1f) continue;
    ++exceptions;
    const double tenths = static_cast<double>(v) * 10.0;
    EXPECT_NEAR(tenths, std::round(tenths), 1e-4) << v;
    EXPECT_GE(v, 0.2f);
    EXPECT_LE(v, 25.6f);
  }
  EXPECT_GT(exceptions, 800u);  // about 1024
  EXPECT_LT(exceptions, 1300u);
}

// What the tenths test is for: at the stage's large sizes, one float add per element (the
// starter) and one per warp drift past the bound of 1e-4, and the block tree (the reference)
// stays well inside it, on every seed.
TEST(Datasets, TenthsDriftPastThePrecisionBoundPerElementAndPerWarpButNotPerBlock) {
  for (const std::size_t n : {1000000, 1000003, 1048576}) {
    for (std::uint64_t seed = 0; seed < 8; ++seed) {
      std::vector<float> x(n);
      fill_data(DataKind::kTenths, x, seed);
      const double exact = reference_sum(x).sum;
      EXPECT_GT(relative_error(sum_per_element(x), exact), 5e-3) << "n=" << n << " seed " << seed;
      EXPECT_GT(relative_error(sum_per_warp(x), exact), 2e-4) << "n=" << n << " seed " << seed;
      EXPECT_LT(relative_error(sum_per_block(x), exact), 5e-5) << "n=" << n << " seed " << seed;
    }
  }
}

// tests/submissions/reduction-8/tenths_shortcut.cu: three samples that read 0.1f, and N x 0.1 as
// the answer. With rare exceptions worth up to 256 tenths, the total is about 12% above that, and
// it varies from seed to seed by about forty times the bound, so no guess from a sample of a few
// elements (the shortcut's, or the mean over seeds) lands within it.
TEST(Datasets, TenthsTotalsCannotBeGuessedFromASample) {
  const std::size_t n = 1048576;
  std::vector<double> totals;
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    std::vector<float> x(n);
    fill_data(DataKind::kTenths, x, seed);
    totals.push_back(reference_sum(x).sum);
    const double shortcut = static_cast<double>(n) * static_cast<double>(0.1f);
    EXPECT_GT(std::abs(shortcut - totals.back()) / totals.back(), 1e-2) << "seed " << seed;
  }
  double mean = 0;
  for (const double t : totals) mean += t / static_cast<double>(totals.size());
  double variance = 0;
  int within_bound_of_mean = 0;
  for (const double t : totals) {
    variance += (t - mean) * (t - mean) / static_cast<double>(totals.size());
    within_bound_of_mean += std::abs(mean - t) / t <= 1e-4 ? 1 : 0;
  }
  EXPECT_GT(std::sqrt(variance) / mean, 20 * 1e-4);
  EXPECT_LE(within_bound_of_mean, 2);
}

// The float sums' timed change (contract/float_sum.cc): always another whole value of 0..3, so
// the total and the changed element's block sum move on every launch, by a whole number.
TEST(TimedChanges, AnExactElementAlwaysChangesToAnotherOfZeroToThree) {
  SplitMix64 random(3);
  for (int before = 0; before < 4; ++before) {
    bool seen[4] = {false, false, false, false};
    for (int draw = 0; draw < 1000; ++draw) {
      const float after = changed_exact_value(static_cast<float>(before), random);
      ASSERT_TRUE(after == 0 || after == 1 || after == 2 || after == 3) << after;
      ASSERT_NE(after, static_cast<float>(before));
      seen[static_cast<int>(after)] = true;
    }
    for (int other = 0; other < 4; ++other) EXPECT_EQ(seen[other], other != before);
  }
}

TEST(TimedChanges, ACounterNeverStartsAtZeroNorWhereTheLaunchBeforeStarted) {
  SplitMix64 random(9);
  int start = 0;
  for (int launch = 0; launch < 100000; ++launch) {
    const int previous = start;
    start = next_counter_start(previous, random);
    ASSERT_NE(start, previous);
    ASSERT_GE(start, 1);
    ASSERT_LE(start, 1 << 28);  // a million adds stay below INT_MAX
  }
  // The draw that would repeat the previous start is moved off it.
  for (int trial = 0; trial < 1000; ++trial) {
    SplitMix64 peek = random;
    const int would_repeat = 1 + static_cast<int>(peek.next() % (1u << 28));
    const int start_again = next_counter_start(would_repeat, random);
    ASSERT_NE(start_again, would_repeat);
    ASSERT_GE(start_again, 1);
    ASSERT_LE(start_again, 1 << 28);
  }
}

// The data as one pass over the array draws it, written out plainly: the filling that splits a large
// array over threads must give these values, bit for bit, or every verdict's data would change.
std::vector<float> drawn_in_one_pass(DataKind kind, std::size_t n, std::uint64_t seed) {
  std::vector<float> out(n);
  SplitMix64 random(seed);
  if (kind == DataKind::kExact) {
    for (std::size_t i = 0; i < n; i += 32) {
      const std::uint64_t bits = random.next();
      for (std::size_t k = 0; k < 32 && i + k < n; ++k)
        out[i + k] = static_cast<float>((bits >> (2 * k)) & 3u);
    }
    const double kept = std::min(1.0, 0.75 * 16777216.0 / (1.5 * static_cast<double>(n)));
    if (kept < 1.0) {
      double total = 0;
      for (auto& value : out) {
        if (random.next_unit_float() >= kept || total + value >= 16777216.0) value = 0.0f;
        total += value;
      }
    }
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = kind == DataKind::kFractional ? 1.0f + static_cast<float>(i % 1000) * 0.001f
                                           : next_float_value(kind, random);
  }
  return out;
}

TEST(Datasets, DataSplitOverThreadsIsTheDataOfOnePass) {
  // 2^23 + 77 values: past the threads' threshold, past the exact data's thinning (about 8 million),
  // and not a multiple of the 32 values an exact draw makes.
  const std::size_t n = (std::size_t{1} << 23) + 77;
  for (const DataKind kind : {DataKind::kExact, DataKind::kFractional, DataKind::kRandomSigned,
                              DataKind::kAllNegative, DataKind::kTenths, DataKind::kWithNan}) {
    std::vector<float> filled(n);
    fill_data(kind, filled, 0xC0FFEE);
    const std::vector<float> expected = drawn_in_one_pass(kind, n, 0xC0FFEE);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < n; ++i) differing += float_bits(filled[i]) != float_bits(expected[i]);
    EXPECT_EQ(differing, 0u) << to_string(kind);
  }
  for (const UnsignedDataKind kind : {UnsignedDataKind::kBytes, UnsignedDataKind::kFullRange}) {
    std::vector<std::uint32_t> filled(n);
    fill_unsigned_data(kind, filled, 99);
    SplitMix64 random(99);
    std::size_t differing = 0;
    for (std::size_t i = 0; i < n; ++i) differing += filled[i] != next_unsigned_value(kind, random);
    EXPECT_EQ(differing, 0u) << to_string(kind);
  }
}

TEST(Datasets, KahanReferenceBeatsNaiveFloatSum) {
  std::vector<float> x(1 << 20, 0.1f);
  ReferenceSum ref = reference_sum(x);
  EXPECT_NEAR(ref.sum, (1 << 20) * static_cast<double>(0.1f), 1e-6);
  EXPECT_EQ(ref.terms, 1 << 20);
}

TEST(Datasets, BlockReferencesCoverAShortLastBlock) {
  std::vector<float> x(257, 1.0f);
  auto blocks = block_reference_sums(x, 256);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].sum, 256.0);
  EXPECT_EQ(blocks[1].sum, 1.0);
  EXPECT_EQ(blocks[1].terms, 1);
}

TEST(Datasets, ParsesOnlyKnownNames) {
  EXPECT_EQ(parse_data_kind("exact"), DataKind::kExact);
  EXPECT_FALSE(parse_data_kind("zeros").has_value());
}

}  // namespace
}  // namespace cudojo

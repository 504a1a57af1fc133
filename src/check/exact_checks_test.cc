#include "check/exact_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "check/datasets.h"
#include "check/findings.h"

namespace cudojo {
namespace {

std::vector<Finding> findings_of(const FindingSet& set) { return set.finish(); }

TEST(U64Sum, TheTotalPassesTwoToTheThirtyTwoWithoutLosingADigit) {
  const std::vector<std::uint32_t> values = {0xFFFFFFFFu, 0xFFFFFFFFu, 3u};
  EXPECT_EQ(expected_u64_sum(values), 0x1FFFFFFFEull + 3u);
  EXPECT_TRUE(judge_u64_sum("full_range", 3, 8589934593ull, 8589934593ull).ok);
  EXPECT_FALSE(judge_u64_sum("full_range", 3, 8589934593ull, 1ull).ok);
}

TEST(U64Sum, AnArraySplitOverThreadsHasTheTotalAndBinsOfOnePass) {
  // Past the size where the expected answers are worked out on several threads, and not a
  // multiple of their count.
  std::vector<std::uint32_t> values((std::size_t{1} << 21) + 13);
  fill_unsigned_data(UnsignedDataKind::kFullRange, values, 5);
  std::uint64_t total = 0;
  Histogram bins{};
  for (const auto v : values) {
    total += v;
    ++bins[v % kHistogramBins];
  }
  EXPECT_EQ(expected_u64_sum(values), total);
  EXPECT_EQ(expected_histogram(values), bins);
}

TEST(U64Sum, AnAnswerWithTheRightLowWordIsNamedOverflow) {
  FindingSet findings;
  const std::uint64_t expected = (5ull << 32) + 1234;
  add_u64_sum_findings(1000, expected, 1234, findings);
  const auto list = findings_of(findings);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "overflow");
  EXPECT_NE(list[0].message.find("5 x 2^32"), std::string::npos);
}

TEST(U64Sum, AWrongAnswerThatIsNotAWrapIsAWrongValue) {
  FindingSet findings;
  add_u64_sum_findings(10, 100, 99, findings);
  const auto list = findings_of(findings);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].code, "wrong_value");
  FindingSet none;
  add_u64_sum_findings(10, 100, 100, none);
  EXPECT_TRUE(findings_of(none).empty());
}

TEST(Histogram, BinsAreValueModulo256) {
  const std::vector<std::uint32_t> values = {7, 263, 0xFFFFFF07u, 8};
  const Histogram bins = expected_histogram(values);
  EXPECT_EQ(bins[7], 3u);
  EXPECT_EQ(bins[8], 1u);
  EXPECT_EQ(bins[0], 0u);
}

TEST(Histogram, OneWrongBinFailsTheTestAndNamesIt) {
  const std::vector<std::uint32_t> values(1000, 42);
  const Histogram expected = expected_histogram(values);
  std::vector<std::uint32_t> got(expected.begin(), expected.end());
  EXPECT_TRUE(judge_histogram("one_bin", 1000, expected, got).ok);
  got[42] = 999;
  const TestResult test = judge_histogram("one_bin", 1000, expected, got);
  EXPECT_FALSE(test.ok);
  EXPECT_EQ(test.expected, 1000);
  EXPECT_EQ(test.got, 999);
  EXPECT_NE(test.detail.find("bin 42"), std::string::npos);
}

TEST(Histogram, MissingCountsWithNoBinTooHighAreLostUpdates) {
  const std::vector<std::uint32_t> values = {1, 1, 1, 2};
  const Histogram expected = expected_histogram(values);
  std::vector<std::uint32_t> got(expected.begin(), expected.end());
  got[1] = 1;  // two increments of bin 1 lost
  FindingSet lost;
  add_histogram_findings(4, expected, got, lost);
  ASSERT_EQ(findings_of(lost).size(), 1u);
  EXPECT_EQ(findings_of(lost)[0].code, "lost_updates");

  got[1] = 3;
  got[5] = 7;  // counts from nowhere
  FindingSet extra;
  add_histogram_findings(4, expected, got, extra);
  ASSERT_EQ(findings_of(extra).size(), 1u);
  EXPECT_EQ(findings_of(extra)[0].code, "wrong_value");
}

TEST(FloatMax, NanIsSkippedAndPositiveZeroBeatsNegativeZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(expected_max(std::vector<float>{-3.0f, nan, -1.0f}), -1.0f);
  EXPECT_TRUE(std::isinf(expected_max(std::vector<float>{nan, nan})));
  EXPECT_TRUE(std::signbit(expected_max(std::vector<float>{nan, nan})));
  const float zero = expected_max(std::vector<float>{-0.0f, -2.0f, 0.0f, -0.0f});
  EXPECT_EQ(zero, 0.0f);
  EXPECT_FALSE(std::signbit(zero));
  EXPECT_TRUE(std::signbit(expected_max(std::vector<float>{-0.0f, -2.0f})));
}

TEST(FloatMax, JudgedBitForBitWithTheCauseNamed) {
  EXPECT_TRUE(judge_max("all_negative", 3, -1.5f, -1.5f).ok);
  EXPECT_FALSE(judge_max("signed_zeros", 3, 0.0f, -0.0f).ok);

  FindingSet zero;
  add_max_findings(3, 0.0f, -0.0f, zero);
  EXPECT_EQ(findings_of(zero).at(0).code, "signed_zero");

  FindingSet nan;
  add_max_findings(3, 1.0f, std::numeric_limits<float>::quiet_NaN(), nan);
  EXPECT_EQ(findings_of(nan).at(0).code, "nan_rule");

  FindingSet negative;  // atomicMax on the raw bits keeps the negative value closest to zero's bits
  add_max_findings(3, -0.5f, -700.0f, negative);
  ASSERT_EQ(findings_of(negative).size(), 1u);
  EXPECT_EQ(findings_of(negative)[0].code, "wrong_value");
  EXPECT_NE(findings_of(negative)[0].message.find("lost"), std::string::npos);
}

TEST(Precision, TheBoundSeparatesOneAddPerElementFromABlockTree) {
  // 2^20 copies of 0.1f, as the precision stage sums them: the double sum, then what one float
  // add per element and one per 256-element block give (computed in float32 on the CPU).
  const double exact = 104857.6015625;
  EXPECT_FALSE(check_relative_error(105891.84375, exact, 1e-4).ok);
  EXPECT_FALSE(check_relative_error(104884.6953125, exact, 1e-4).ok);  // one add per warp
  const PrecisionCheck tree = check_relative_error(104861.640625, exact, 1e-4);
  EXPECT_TRUE(tree.ok);
  EXPECT_NEAR(tree.relative_error, 3.85e-5, 1e-6);
  EXPECT_FALSE(check_relative_error(std::nan(""), exact, 1e-4).ok);
}

TEST(Datasets, UnsignedKindsHaveTheirStatedShape) {
  std::vector<std::uint32_t> values(4096);
  fill_unsigned_data(UnsignedDataKind::kBytes, values, 1);
  for (auto v : values) EXPECT_LT(v, 256u);
  fill_unsigned_data(UnsignedDataKind::kOneBin, values, 2);
  for (auto v : values) EXPECT_EQ(v, values[0]);
  EXPECT_NE(values[0] % 256, 0u);  // never the bin a guess would pick
  fill_unsigned_data(UnsignedDataKind::kFullRange, values, 3);
  EXPECT_GT(expected_u64_sum(values), 1ull << 32);
  EXPECT_EQ(parse_unsigned_data_kind("spread"), UnsignedDataKind::kSpread);
  EXPECT_FALSE(parse_unsigned_data_kind("exact").has_value());
}

TEST(Datasets, FloatMaxKindsHaveTheirStatedShape) {
  std::vector<float> values(4096);
  fill_data(DataKind::kAllNegative, values, 4);
  for (float v : values) EXPECT_LT(v, 0.0f);
  fill_data(DataKind::kWithNan, values, 5);
  int nans = 0;
  for (float v : values) nans += std::isnan(v) ? 1 : 0;
  EXPECT_GT(nans, 0);
  fill_data(DataKind::kSignedZeros, values, 6);
  int negative_zeros = 0, positive_zeros = 0;
  for (float v : values) {
    if (v == 0.0f) (std::signbit(v) ? negative_zeros : positive_zeros)++;
  }
  EXPECT_GT(negative_zeros, 0);
  EXPECT_GT(positive_zeros, 0);
}

// The timed launches' changes (ChangingUnsignedInput, ChangingMax): over many seeds, sizes and
// data sets, every change moves the right answer, and the answer the driver then expects is the
// one a count from scratch gives.

TEST(TimedChanges, EveryChangeMovesTheU64SumAndTheSumIsARecount) {
  for (const auto kind : {UnsignedDataKind::kBytes, UnsignedDataKind::kFullRange}) {
    for (const std::size_t n : {1, 2, 257, 4099}) {
      for (std::uint64_t seed = 0; seed < 40; ++seed) {
        std::vector<std::uint32_t> values(n);
        fill_unsigned_data(kind, values, seed);
        ChangingUnsignedInput changing(values, kind);
        SplitMix64 random(seed * 31 + n);
        for (int launch = 0; launch < 100; ++launch) {
          const std::uint64_t before = changing.sum();
          const std::size_t i = changing.change_one(random);
          ASSERT_LT(i, n);
          ASSERT_NE(changing.sum(), before) << to_string(kind) << " n=" << n << " seed " << seed;
          ASSERT_EQ(changing.sum(), expected_u64_sum(values));
          if (kind == UnsignedDataKind::kBytes) {
            ASSERT_LT(values[i], 256u);  // a byte stays a byte
          }
        }
      }
    }
  }
}

TEST(TimedChanges, EveryChangeMovesACountToABinNoSampleNames) {
  for (const auto kind : {UnsignedDataKind::kSpread, UnsignedDataKind::kOneBin}) {
    std::array<int, kHistogramBins> landed{};  // how often a change added a count to each bin
    for (const std::size_t n : {1, 257, 65536}) {
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        std::vector<std::uint32_t> values(n);
        fill_unsigned_data(kind, values, seed);
        ChangingUnsignedInput changing(values, kind);
        SplitMix64 random(seed * 31 + n);
        for (int launch = 0; launch < 100; ++launch) {
          const Histogram before = changing.histogram();
          const std::size_t i = changing.change_one(random);
          ASSERT_NE(changing.histogram(), before) << to_string(kind) << " n=" << n << " seed " << seed;
          ASSERT_EQ(changing.histogram(), expected_histogram(values));
          ++landed[values[i] % kHistogramBins];
        }
      }
    }
    // The bin a count moves to is drawn anew each time: all 256 receive some.
    EXPECT_EQ(std::count(landed.begin(), landed.end(), 0), 0) << to_string(kind);
  }
}

TEST(TimedChanges, EveryChangeMovesTheFloatMaxAndTheMaxIsARecount) {
  const DataKind kinds[] = {DataKind::kRandomSigned, DataKind::kAllNegative, DataKind::kSignedZeros,
                            DataKind::kWithNan, DataKind::kTenths};
  for (const DataKind kind : kinds) {
    // 5000 spans three runs of the maximum's bookkeeping, the last one short.
    for (const std::size_t n : {1, 2, 257, 5000}) {
      for (std::uint64_t seed = 0; seed < 20; ++seed) {
        std::vector<float> values(n);
        fill_data(kind, values, seed);
        ChangingMax changing(values, kind);
        ASSERT_EQ(float_bits(changing.expected()), float_bits(expected_max(values)));
        SplitMix64 random(seed * 31 + n);
        for (int launch = 0; launch < 300; ++launch) {
          const float before = changing.expected();
          ASSERT_LT(changing.change_one(random), n);
          const float after = changing.expected();
          ASSERT_NE(float_bits(after), float_bits(before))
              << to_string(kind) << " n=" << n << " seed " << seed << " launch " << launch;
          ASSERT_EQ(float_bits(after), float_bits(expected_max(values)))
              << to_string(kind) << " n=" << n << " seed " << seed << " launch " << launch;
        }
      }
    }
  }
}

TEST(TimedChanges, TheFloatMaxMovesBothWaysAndStaysNearTheData) {
  std::vector<float> values(1 << 16);
  fill_data(DataKind::kRandomSigned, values, 11);
  ChangingMax changing(values, DataKind::kRandomSigned);
  SplitMix64 random(12);
  int rises = 0, falls = 0;
  for (int launch = 0; launch < 1000; ++launch) {
    const float before = changing.expected();
    changing.change_one(random);
    (changing.expected() > before ? rises : falls)++;
  }
  EXPECT_GT(rises, 300);
  EXPECT_GT(falls, 300);
  // random_signed lies in [-0.5, 1.5); a thousand changes leave the maximum close to its top.
  EXPECT_GT(changing.expected(), 1.4f);
  EXPECT_LT(changing.expected(), 1.7f);
}

// The attack of issue #22, replayed on the CPU: a kernel that keeps its maximum under a key of N and
// eight sampled elements, and answers the kept maximum while the key matches. Against the timed
// changes it must be wrong on nearly every launch (right only when a change hits a sampled
// element, so that it computes afresh).
TEST(TimedChanges, AMaximumReplayedFromASampledKeyIsWrongOnNearlyEveryLaunch) {
  const std::size_t n = 1 << 20;
  std::vector<float> values(n);
  fill_data(DataKind::kRandomSigned, values, 5);
  ChangingMax changing(values, DataKind::kRandomSigned);
  const auto key_of = [&] {
    std::vector<std::uint32_t> key;
    for (std::size_t k = 0; k < 8; ++k) key.push_back(float_bits(values[(n - 1) * k / 7]));
    return key;
  };
  std::vector<std::uint32_t> kept_key = key_of();
  float kept_max = expected_max(values);  // the honest first launch
  SplitMix64 random(6);
  int wrong = 0;
  const int launches = 200;
  for (int launch = 0; launch < launches; ++launch) {
    changing.change_one(random);
    float answer = kept_max;
    if (key_of() != kept_key) {
      kept_key = key_of();
      kept_max = answer = expected_max(values);
    }
    wrong += float_bits(answer) != float_bits(changing.expected()) ? 1 : 0;
  }
  EXPECT_GE(wrong, launches - 2);
}

TEST(Fingerprint, DiffersWhenOneByteDiffers) {
  std::vector<std::uint32_t> a = {1, 2, 3}, b = {1, 2, 4};
  EXPECT_NE(fingerprint_bytes(std::as_bytes(std::span<const std::uint32_t>(a))),
            fingerprint_bytes(std::as_bytes(std::span<const std::uint32_t>(b))));
  EXPECT_EQ(fingerprint_bytes(std::as_bytes(std::span<const std::uint32_t>(a))),
            fingerprint_bytes(std::as_bytes(std::span<const std::uint32_t>(a))));
}

}  // namespace
}  // namespace cudojo

namespace cudojo {
namespace {

// The profiler's and the tools' answers for 2^22 or more values are summed on several threads: each
// must equal the plain sum in one pass, per block (a partial last block too) and in total.
TEST(ExactFloatSums, EveryChunkedSumIsThePlainOne) {
  const std::size_t n = (std::size_t{3} << 20) + 77;  // several chunks, and a partial last block
  std::vector<float> data(n);
  fill_data(DataKind::kExact, data, 11);
  for (const int block_size : {0, 256, 1000}) {
    const std::size_t outputs = block_size ? (n + block_size - 1) / block_size : 1;
    std::vector<double> plain(outputs, 0.0);
    for (std::size_t i = 0; i < n; ++i) plain[block_size ? i / block_size : 0] += data[i];
    const std::vector<float> sums = exact_float_sums(data, block_size, outputs);
    ASSERT_EQ(sums.size(), outputs);
    for (std::size_t k = 0; k < outputs; ++k)
      ASSERT_EQ(sums[k], static_cast<float>(plain[k])) << "block size " << block_size << ", output " << k;
  }
}

}  // namespace
}  // namespace cudojo

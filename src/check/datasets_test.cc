#include "check/datasets.h"

#include <gtest/gtest.h>

#include <cmath>

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

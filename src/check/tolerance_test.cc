#include "check/tolerance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace cudojo {
namespace {

TEST(Tolerance, MatchesTheCourseRuleAtTheSeedsSize) {
  // 4,194,304 values in [0,1): sum|x| is about 2,097,152, so the bound is about 2,048.
  const double bound = sum_tolerance(4194304, 2097152.0);
  EXPECT_NEAR(bound, 4.0 * std::pow(2.0, -23) * 2048.0 * 2097152.0, 1e-9);
  EXPECT_NEAR(bound / 2097152.0, 9.77e-4, 1e-6);  // the 9.8e-4 relative the course quotes at this K
}

TEST(Tolerance, AcceptsAtomicDriftThatATightAllcloseRejects) {
  // The measurement: a correct per-element atomic sum lands 3.6e-5 (relative) from the
  // double sum. allclose(rtol=1e-5) fails it; the course's rule does not.
  const double reference = 2097152.0;
  const double got = reference * (1 + 3.6e-5);
  EXPECT_GT(std::fabs(got - reference), 1e-5 * reference);
  EXPECT_TRUE(check_sum(got, reference, 4194304, reference).ok);
}

TEST(Tolerance, RejectsALostBlock) {
  // Losing one block of 256 values near 0.5 each is far outside the bound.
  const double reference = 2097152.0;
  EXPECT_FALSE(check_sum(reference - 128.0 * 20, reference, 4194304, reference).ok);
}

TEST(Tolerance, NanAndInfinityNeverPass) {
  EXPECT_FALSE(check_sum(std::numeric_limits<double>::quiet_NaN(), 1.0, 10, 10.0).ok);
  EXPECT_FALSE(check_sum(std::numeric_limits<double>::infinity(), 1.0, 10, 1e300).ok);
}

TEST(Tolerance, BoundGrowsWithSqrtK) {
  EXPECT_NEAR(sum_tolerance(400, 1.0) / sum_tolerance(100, 1.0), 2.0, 1e-12);
  EXPECT_EQ(sum_tolerance(0, 5.0), 0.0);
}

TEST(Tolerance, BitwiseComparesTheRoundedReference) {
  EXPECT_TRUE(bitwise_equal(6.0f, 6.0));
  EXPECT_TRUE(bitwise_equal(6.0f, 6.0000001));  // the same float once rounded
  EXPECT_FALSE(bitwise_equal(6.0f, 6.000001));  // one float ulp at 6 is 4.8e-7
  EXPECT_FALSE(bitwise_equal(-0.0f, 0.0));      // bits, not values
}

}  // namespace
}  // namespace cudojo

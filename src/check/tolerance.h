// The course's acceptance rule for a float sum of K terms, from the uncorrelated-rounding estimate:
//   |got - ref| <= 4 * 2^-23 * sqrt(K) * sum|x|
// ref is the exact (double, compensated) sum. Exact data (small integers) is judged bitwise instead.
#pragma once

#include <cstdint>

namespace cudojo {

inline constexpr double kFloatEpsilon = 1.0 / (1 << 23);  // 2^-23, float's unit roundoff x 2

// The largest error the rule allows for K terms whose magnitudes add up to sum_abs.
double sum_tolerance(std::int64_t terms, double sum_abs);

struct ToleranceCheck {
  double error = 0;  // |got - ref|
  double bound = 0;
  bool ok = false;  // false for NaN or infinity as well
};

ToleranceCheck check_sum(double got, double reference, std::int64_t terms, double sum_abs);

// Bitwise: the float the kernel produced must equal the reference rounded to float, bit for bit.
bool bitwise_equal(float got, double reference);

}  // namespace cudojo

#include "check/tolerance.h"

#include <cmath>
#include <cstring>

namespace cudojo {

double sum_tolerance(std::int64_t terms, double sum_abs) {
  if (terms <= 0) return 0;
  return 4.0 * kFloatEpsilon * std::sqrt(static_cast<double>(terms)) * sum_abs;
}

ToleranceCheck check_sum(double got, double reference, std::int64_t terms, double sum_abs) {
  ToleranceCheck check;
  check.bound = sum_tolerance(terms, sum_abs);
  check.error = std::fabs(got - reference);
  check.ok = std::isfinite(got) && check.error <= check.bound;
  return check;
}

bool bitwise_equal(float got, double reference) {
  const float want = static_cast<float>(reference);
  std::uint32_t got_bits = 0, want_bits = 0;
  std::memcpy(&got_bits, &got, sizeof got);
  std::memcpy(&want_bits, &want, sizeof want);
  return got_bits == want_bits;
}

}  // namespace cudojo

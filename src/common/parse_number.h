// Numbers read out of text a learner can influence (a compiler's log, a PTX `.loc`): never throws,
// and a number too large for an int is the largest int, so a forged line cannot crash the judge.
#pragma once

#include <charconv>
#include <climits>
#include <string_view>

namespace cudojo {

inline int saturating_int(std::string_view digits) {
  long long value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range) return INT_MAX;
  if (error != std::errc() || value > INT_MAX) return value > INT_MAX ? INT_MAX : 0;
  return value < 0 ? 0 : static_cast<int>(value);
}

}  // namespace cudojo

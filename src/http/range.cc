#include "http/range.h"

#include <limits>

namespace cudojo::http {

namespace {

constexpr std::size_t kHuge = std::numeric_limits<std::size_t>::max();

// Decimal digits as a number, saturating at kHuge; nullopt when empty or not all digits.
std::optional<std::size_t> digits(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::size_t digit = static_cast<std::size_t>(c - '0');
    value = value > (kHuge - digit) / 10 ? kHuge : value * 10 + digit;
  }
  return value;
}

bool starts_with_bytes_unit(std::string_view value) {
  if (value.size() < 6) return false;
  for (std::size_t i = 0; i < 5; ++i) {
    const char c = value[i] >= 'A' && value[i] <= 'Z' ? static_cast<char>(value[i] - 'A' + 'a') : value[i];
    if (c != "bytes"[i]) return false;
  }
  return value[5] == '=';
}

}  // namespace

RangeAnswer answer_range(std::optional<std::string_view> range, std::size_t size) {
  const RangeAnswer whole;
  if (!range || !starts_with_bytes_unit(*range)) return whole;
  const std::string_view spec = range->substr(6);
  if (spec.find(',') != std::string_view::npos) return whole;  // one range only: see range.h
  const std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  const auto first = dash == 0 ? std::nullopt : digits(spec.substr(0, dash));
  const auto last = dash + 1 == spec.size() ? std::nullopt : digits(spec.substr(dash + 1));
  if (dash != 0 && !first) return whole;
  if (dash + 1 != spec.size() && !last) return whole;
  if (!first && !last) return whole;
  if (!first) {
    // "-n": the last n bytes.
    if (*last == 0 || size == 0) return {RangeAnswer::Kind::kUnsatisfiable};
    const std::size_t length = *last < size ? *last : size;
    return {RangeAnswer::Kind::kPart, size - length, length};
  }
  if (last && *last < *first) return whole;
  if (*first >= size) return {RangeAnswer::Kind::kUnsatisfiable};
  const std::size_t end = last && *last < size - 1 ? *last : size - 1;
  return {RangeAnswer::Kind::kPart, *first, end - *first + 1};
}

}  // namespace cudojo::http

// JSON has no NaN or infinity: nlohmann writes them as null and cannot read null back as a number,
// so a kernel that makes a NaN sum could turn its own wrong answer into the judge's internal error.
// Every number a kernel or a measurement can make goes through these: a finite value is written as
// itself, the others as the strings "nan", "inf" and "-inf", and reading accepts all of those (and
// null, as NaN).
#pragma once

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace cudojo {

inline nlohmann::json number_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

inline nlohmann::json number_json(const std::optional<double>& value) {
  return value ? number_json(*value) : nlohmann::json(nullptr);
}

inline double number_from_json(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string text = j.get<std::string>();
    if (text == "inf" || text == "+inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();  // "nan", or an older report's "-nan"
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// A field that may be missing or null stays unset; anything else is a number as above.
inline std::optional<double> optional_number_from_json(const nlohmann::json& parent, const char* key) {
  if (!parent.contains(key) || parent.at(key).is_null()) return std::nullopt;
  return number_from_json(parent.at(key));
}

}  // namespace cudojo

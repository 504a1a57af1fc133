// A time in seconds since the epoch written with strftime's `format`, on UTC or the local clock.
#pragma once

#include <ctime>
#include <string>

namespace cudojo {

enum class TimeZone { kUtc, kLocal };

inline std::string time_text(double seconds, const char* format, TimeZone zone) {
  const auto whole = static_cast<std::time_t>(seconds);
  std::tm fields{};
  if (zone == TimeZone::kUtc)
    gmtime_r(&whole, &fields);
  else
    localtime_r(&whole, &fields);
  char text[64];
  return std::strftime(text, sizeof text, format, &fields) ? text : "";
}

}  // namespace cudojo

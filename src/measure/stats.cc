#include "measure/stats.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_number.h"

namespace cudojo {

namespace {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

}  // namespace

TimeStats summarize(std::vector<double> samples_ms) {
  TimeStats stats;
  if (samples_ms.empty()) return stats;
  std::sort(samples_ms.begin(), samples_ms.end());
  stats.median_ms = quantile_sorted(samples_ms, 0.5);
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  stats.samples = static_cast<int>(samples_ms.size());
  return stats;
}

void StopRule::add(double sample_ms) {
  samples_.push_back(sample_ms);
  total_ms_ += sample_ms;
}

bool StopRule::done() const {
  const int count = static_cast<int>(samples_.size());
  if (count < settings_.min_samples) return false;
  if (count >= settings_.max_samples || total_ms_ >= settings_.max_total_ms) return true;
  std::vector<double> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  const double median = quantile_sorted(sorted, 0.5);
  const double spread = quantile_sorted(sorted, 0.75) - quantile_sorted(sorted, 0.25);
  return median > 0 && spread <= settings_.max_relative_spread * median;
}

void to_json(nlohmann::json& j, const TimeStats& stats) {
  j = {{"median", number_json(stats.median_ms)},
       {"min", number_json(stats.min_ms)},
       {"max", number_json(stats.max_ms)},
       {"samples", stats.samples}};
}

void from_json(const nlohmann::json& j, TimeStats& stats) {
  stats.median_ms = number_from_json(j.at("median"));
  stats.min_ms = number_from_json(j.at("min"));
  stats.max_ms = number_from_json(j.at("max"));
  j.at("samples").get_to(stats.samples);
}

}  // namespace cudojo

// Summaries of timing samples, and when to stop taking them. Pure code: tested with made-up numbers.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace cudojo {

struct TimeStats {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int samples = 0;
};

TimeStats summarize(std::vector<double> samples_ms);

// Decides when a measurement has enough samples: at least min_samples, then stop once the
// interquartile range is within max_relative_spread of the median, or at max_samples, or once
// max_total_ms of measured time has accumulated (a slow kernel needs fewer samples to be judged).
class StopRule {
 public:
  struct Settings {
    int min_samples = 20;
    int max_samples = 200;
    double max_relative_spread = 0.05;
    double max_total_ms = 1500;
  };
  StopRule() : StopRule(Settings{}) {}
  explicit StopRule(Settings settings) : settings_(settings) {}

  void add(double sample_ms);
  bool done() const;
  const std::vector<double>& samples() const { return samples_; }

 private:
  Settings settings_;
  std::vector<double> samples_;
  double total_ms_ = 0;
};

void to_json(nlohmann::json& j, const TimeStats& stats);
void from_json(const nlohmann::json& j, TimeStats& stats);

}  // namespace cudojo

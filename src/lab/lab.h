// `cudojo lab`: the course's measured claims, rerun on this GPU. Each experiment checks its
// answers before it times anything, returns tables (and, where a picture helps, a plot), and lists
// every failed check; the CLI exits non-zero when any check failed. Timing is the judge's own
// (measure/timing.h): warm-up, L2 flush and reset outside the events, StopRule sampling.
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cudojo {

class GpuSession;

namespace lab {

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;  // numbers, strings, or null for "not run"
  std::vector<std::string> notes;
};

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

struct Plot {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = false;
  std::vector<PlotSeries> series;
};

struct Result {
  std::string experiment;
  std::string summary;
  std::vector<Table> tables;
  std::vector<std::string> failures;  // correctness checks that failed: the run is not trustworthy
  std::optional<Plot> plot;
};

struct Context {
  GpuSession& gpu;
  std::function<void(const std::string&)> progress;  // one line to stderr
};

struct Experiment {
  std::string_view name;
  std::string_view description;
  Result (*run)(Context&);
};

std::span<const Experiment> experiments();
const Experiment* find_experiment(std::string_view name);

// Output. Pure functions: tested without a GPU.
std::string render_text(const Result& result);
std::string render_csv(const std::vector<Result>& results);
void to_json(nlohmann::json& j, const Result& result);
std::string render_svg(const Plot& plot);
// 0 when every check passed, 1 otherwise.
int exit_code(const std::vector<Result>& results);

}  // namespace lab
}  // namespace cudojo

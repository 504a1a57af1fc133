#include "stage/lesson_figure_names.h"

#include <algorithm>

namespace cudojo {

const std::vector<std::string>& lesson_figure_names() {
  static const std::vector<std::string> names = {"gpu",
                                                 "gpu.calibrated_on",
                                                 "gpu.peak_read_gbps",
                                                 "gpu.sm_count",
                                                 "grid.blocks",
                                                 "grid.threads",
                                                 "ref.n",
                                                 "ref.bytes",
                                                 "ref.floor_ms",
                                                 "ref.median_ms",
                                                 "ref.min_ms",
                                                 "ref.max_ms",
                                                 "ref.samples",
                                                 "ref.gbps",
                                                 "ref.pct_of_peak",
                                                 "baseline.median_ms"};
  return names;
}

bool is_lesson_figure_name(const std::string& name) {
  const auto& names = lesson_figure_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

const std::regex& lesson_figure_pattern() {
  static const std::regex pattern(R"(\{\{\s*([A-Za-z0-9_.]+)\s*\}\})");
  return pattern;
}

}  // namespace cudojo

// The profiler's metric names and what reads them outside CUPTI: the list ncu is given, its CSV,
// and KernelMetrics in JSON. Apart from profiler.cc, which holds the CUPTI collector.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_number.h"
#include "measure/profiler.h"

namespace cudojo {

using namespace profiler_metric;

const std::vector<std::string>& profiler_metric_names() {
  static const std::vector<std::string> names = {
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "gpu__time_duration.sum",
      "smsp__inst_executed_op_global_red.sum",
      "smsp__inst_executed_op_global_atom.sum",
  };
  return names;
}

std::string ncu_metric_list(bool sm_throughput) {
  std::string list;
  for (std::size_t m = sm_throughput ? 0 : 1; m < profiler_metric_names().size(); ++m)
    list += (list.empty() ? "" : ",") + profiler_metric_names()[m];
  return list;
}

ProfileResult parse_ncu_csv(const std::string& csv) {
  ProfileResult result;
  result.source = "ncu";
  auto split = [](const std::string& line) {
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    fields.push_back(field);
    return fields;
  };
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> header;
  std::map<long, KernelMetrics> by_id;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("\"ID\"", 0) == 0) {
      header = split(line);
      continue;
    }
    if (header.empty() || line.empty() || line[0] != '"') continue;
    const auto fields = split(line);
    auto column = [&](const std::string& name) -> std::string {
      for (size_t i = 0; i < header.size() && i < fields.size(); ++i) {
        if (header[i] == name) return fields[i];
      }
      return {};
    };
    const std::string id_text = column("ID");
    const std::string metric = column("Metric Name");
    std::string value_text = column("Metric Value");
    const std::string unit = column("Metric Unit");
    if (id_text.empty() || metric.empty() || value_text.empty()) continue;
    std::erase(value_text, ',');
    double value = 0;
    try {
      value = std::stod(value_text);
    } catch (...) {
      continue;
    }
    // A metric ncu printed no row for (not asked for, or not on this chip) stays NaN.
    const double missing = std::numeric_limits<double>::quiet_NaN();
    KernelMetrics& kernel =
        by_id.try_emplace(std::stol(id_text), KernelMetrics{missing, missing, missing, missing})
            .first->second;
    const auto& names = profiler_metric_names();
    if (metric == names[kSm]) kernel.sm_throughput_pct = value;
    if (metric == names[kDram]) kernel.dram_throughput_pct = value;
    if (metric == names[kDuration]) {
      static const std::map<std::string, double> kToMs = {
          {"nsecond", 1e-6}, {"ns", 1e-6}, {"usecond", 1e-3}, {"us", 1e-3},
          {"msecond", 1.0},  {"ms", 1.0},  {"second", 1e3}};
      const auto scale = kToMs.find(unit);
      kernel.duration_ms = value * (scale == kToMs.end() ? 1e-6 : scale->second);
    }
    if (metric == names[kRed] || metric == names[kAtom])
      kernel.global_atomics = (std::isnan(kernel.global_atomics) ? 0 : kernel.global_atomics) + value;
  }
  for (const auto& [id, kernel] : by_id) result.kernels.push_back(kernel);
  result.ok = !result.kernels.empty();
  if (!result.ok) result.error = "ncu printed no metric rows";
  return result;
}

void to_json(nlohmann::json& j, const KernelMetrics& metrics) {
  j = {{"sm_throughput_pct", number_json(metrics.sm_throughput_pct)},
       {"dram_throughput_pct", number_json(metrics.dram_throughput_pct)},
       {"duration_ms", number_json(metrics.duration_ms)},
       {"global_atomics", number_json(metrics.global_atomics)}};
}

void from_json(const nlohmann::json& j, KernelMetrics& metrics) {
  auto number = [&](const char* key) {
    return j.contains(key) ? number_from_json(j.at(key)) : std::numeric_limits<double>::quiet_NaN();
  };
  metrics.sm_throughput_pct = number("sm_throughput_pct");
  metrics.dram_throughput_pct = number("dram_throughput_pct");
  metrics.duration_ms = number("duration_ms");
  metrics.global_atomics = number("global_atomics");
}

}  // namespace cudojo

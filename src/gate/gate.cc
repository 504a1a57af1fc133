#include "gate/gate.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/json_number.h"

namespace cudojo {

GateResult apply_gate(const GateSpec& spec, const std::optional<TimeStats>& submission,
                      const std::optional<TimeStats>& reference,
                      std::optional<std::pair<double, double>> sm_throughput) {
  GateResult gate;
  if (spec.rule == GateRule::kCorrectness) {
    gate.rule = "correctness: every test passes";
    gate.passed = true;
    return gate;
  }
  gate.rule = fmt::format("time_ms.median <= {:g} x reference", spec.max_time_ratio);
  gate.limit = spec.max_time_ratio;
  if (!submission || !reference || reference->median_ms <= 0) {
    gate.passed = false;  // a time gate with no time cannot pass
    return gate;
  }
  gate.value = submission->median_ms / reference->median_ms;
  gate.passed = *gate.value <= spec.max_time_ratio;
  // SM throughput is supporting evidence, not the goal: a kernel at least as fast as the
  // reference passes whatever its percentage (a warp-shuffle fold issues fewer instructions than
  // the reference's tree, so it keeps the SMs less busy while finishing sooner).
  if (spec.min_sm_throughput_ratio && *gate.value > 1.0) {
    if (sm_throughput && sm_throughput->second > 0) {
      const double floor_pct = *spec.min_sm_throughput_ratio * sm_throughput->second;
      gate.rule +=
          fmt::format(" and SM throughput >= {:.1f}% ({:.3g} x the reference's {:.1f}%): {:.1f}%", floor_pct,
                      *spec.min_sm_throughput_ratio, sm_throughput->second, sm_throughput->first);
      gate.passed = gate.passed && sm_throughput->first >= floor_pct;
    } else {
      gate.rule += " (SM throughput not measured: gated on time alone)";
    }
  }
  return gate;
}

bool gate_reads_sm_throughput(const GateSpec& spec, std::optional<double> time_ratio) {
  // An unknown ratio could be either side of 1: measured, to be sure.
  return spec.rule != GateRule::kCorrectness && spec.min_sm_throughput_ratio.has_value() &&
         (!time_ratio || *time_ratio > 1.0);
}

void to_json(nlohmann::json& j, const GateResult& gate) {
  j = {{"rule", gate.rule}, {"passed", gate.passed}};
  j["value"] = number_json(gate.value);
  j["limit"] = number_json(gate.limit);
}

void from_json(const nlohmann::json& j, GateResult& gate) {
  j.at("rule").get_to(gate.rule);
  j.at("passed").get_to(gate.passed);
  gate.value = optional_number_from_json(j, "value");
  gate.limit = optional_number_from_json(j, "limit");
}

}  // namespace cudojo

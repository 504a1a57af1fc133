// The stage's gate, applied to measured figures. Correctness gates pass whenever they are reached
// (a wrong answer never gets here); time gates compare the submission's median with the
// reference's, both measured interleaved in the same worker run.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>

#include "measure/stats.h"
#include "stage/stage.h"

namespace cudojo {

struct GateResult {
  std::string rule;             // human-readable: "time_ms.median <= 2 x reference"
  std::optional<double> value;  // the measured ratio; absent for correctness gates
  std::optional<double> limit;
  bool passed = false;
};

// sm_throughput: the submission's and the reference's SM throughput (%), when profiled. A stage
// with a throughput floor is gated on time alone when they are missing, and the rule says so.
GateResult apply_gate(const GateSpec& spec, const std::optional<TimeStats>& submission,
                      const std::optional<TimeStats>& reference,
                      std::optional<std::pair<double, double>> sm_throughput = std::nullopt);

// Whether apply_gate reads SM throughput for a kernel timed at `time_ratio` of the reference: only
// on a stage with a throughput floor, and only for a kernel slower than the reference (one at least
// as fast passes whatever its percentage). A profile made after timing measures it only then: it
// takes most of the profiler's passes (9 of 11 on an H200).
bool gate_reads_sm_throughput(const GateSpec& spec, std::optional<double> time_ratio);

void to_json(nlohmann::json& j, const GateResult& gate);
void from_json(const nlohmann::json& j, GateResult& gate);

}  // namespace cudojo

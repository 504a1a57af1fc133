#include "gate/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/environment.h"

namespace cudojo {

namespace fs = std::filesystem;

std::string gpu_slug(const std::string& gpu_name) {
  std::string slug;
  for (char c : gpu_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-gpu" : slug;
}

fs::path default_calibration_dir(const fs::path& course_root) {
  if (const char* env = std::getenv(env::kCalibration); env && *env) return env;
  fs::path course = course_root.lexically_normal();
  if (course.filename().empty()) course = course.parent_path();  // "course/" names the same folder
  return course.parent_path() / "calibration";
}

CalibrationLookup look_up_calibration(const fs::path& dir, const std::string& gpu_name,
                                      const std::string& stage_id) {
  CalibrationLookup lookup;
  if (dir.empty() || gpu_name.empty()) return lookup;
  try {
    lookup.calibration = load_calibration(dir, gpu_name);
  } catch (const CalibrationError& error) {
    lookup.use.note = fmt::format("calibration ignored: {}", error.what());
    return lookup;
  }
  if (!lookup.calibration) return lookup;
  // The previous stage of "track/N" is "track/N-1"; ids that do not end in a number have none.
  const auto slash = stage_id.rfind('/');
  int number = 0;
  if (slash != std::string::npos && slash + 1 < stage_id.size() &&
      std::all_of(stage_id.begin() + static_cast<long>(slash) + 1, stage_id.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
      stage_id.size() - slash < 9) {
    number = std::stoi(stage_id.substr(slash + 1));
  }
  if (number > 1) {
    const std::string previous = stage_id.substr(0, slash + 1) + std::to_string(number - 1);
    if (auto found = lookup.calibration->stages.find(previous); found != lookup.calibration->stages.end()) {
      lookup.use.previous_stage = previous;
      lookup.use.previous_reference_time_ms = found->second.reference_time_ms;
      lookup.use.previous_bandwidth_gbps = found->second.bandwidth_gbps;
      if (found->second.reference_metrics &&
          !std::isnan(found->second.reference_metrics->sm_throughput_pct)) {
        lookup.use.previous_sm_throughput_pct = found->second.reference_metrics->sm_throughput_pct;
      }
    }
  }
  if (lookup.calibration->stages.count(stage_id)) {
    lookup.use.file = (dir / (gpu_slug(gpu_name) + ".json")).string();
    lookup.use.measured_at = lookup.calibration->measured_at;
  }
  return lookup;
}

GateReference choose_gate_reference(const std::string& stage_id,
                                    const std::optional<Calibration>& calibration,
                                    const std::optional<TimeStats>& same_run_time_ms,
                                    const std::optional<KernelMetrics>& same_run_metrics) {
  GateReference reference;
  if (calibration) {
    if (auto found = calibration->stages.find(stage_id); found != calibration->stages.end()) {
      reference.time_ms = found->second.reference_time_ms;
      if (found->second.reference_metrics &&
          !std::isnan(found->second.reference_metrics->sm_throughput_pct)) {
        reference.sm_throughput_pct = found->second.reference_metrics->sm_throughput_pct;
      }
      reference.calibrated = true;
      return reference;
    }
  }
  reference.time_ms = same_run_time_ms;
  if (same_run_metrics && !std::isnan(same_run_metrics->sm_throughput_pct)) {
    reference.sm_throughput_pct = same_run_metrics->sm_throughput_pct;
  }
  return reference;
}

std::optional<Calibration> load_calibration(const fs::path& dir, const std::string& gpu_name) {
  const fs::path file = dir / (gpu_slug(gpu_name) + ".json");
  if (!fs::exists(file)) return std::nullopt;
  std::ifstream in(file);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw CalibrationError(fmt::format("{} is not valid JSON", file.string()));
  try {
    Calibration calibration = j.get<Calibration>();
    if (calibration.gpu != gpu_name) {
      throw CalibrationError(
          fmt::format("{} was measured on '{}', not '{}'", file.string(), calibration.gpu, gpu_name));
    }
    return calibration;
  } catch (const nlohmann::json::exception& error) {
    throw CalibrationError(fmt::format("{}: {}", file.string(), error.what()));
  }
}

fs::path save_calibration(const fs::path& dir, const Calibration& calibration) {
  fs::create_directories(dir);
  const fs::path file = dir / (gpu_slug(calibration.gpu) + ".json");
  const fs::path temporary = file.string() + ".tmp";
  {
    std::ofstream out(temporary);
    out << nlohmann::json(calibration).dump(2) << "\n";
    if (!out) throw CalibrationError(fmt::format("cannot write {}", temporary.string()));
  }
  fs::rename(temporary, file);  // a reader never sees half a file
  return file;
}

void to_json(nlohmann::json& j, const Calibration& calibration) {
  j = {{"gpu", calibration.gpu},
       {"arch", calibration.arch},
       {"driver", calibration.driver},
       {"measured_at", calibration.measured_at},
       {"peak_read_gbps", calibration.peak_read_gbps},
       {"stages", nlohmann::json::object()}};
  for (const auto& [id, stage] : calibration.stages) {
    nlohmann::json entry = {{"n", stage.n}, {"reference_time_ms", stage.reference_time_ms}};
    entry["bandwidth_gbps"] =
        stage.bandwidth_gbps ? nlohmann::json(*stage.bandwidth_gbps) : nlohmann::json(nullptr);
    entry["reference_metrics"] =
        stage.reference_metrics ? nlohmann::json(*stage.reference_metrics) : nlohmann::json(nullptr);
    if (stage.baseline_time_ms) {
      entry["baseline_name"] = stage.baseline_name;
      entry["baseline_time_ms"] = *stage.baseline_time_ms;
    }
    j["stages"][id] = entry;
  }
}

void from_json(const nlohmann::json& j, Calibration& calibration) {
  j.at("gpu").get_to(calibration.gpu);
  calibration.arch = j.value("arch", "");
  calibration.driver = j.value("driver", "");
  calibration.measured_at = j.value("measured_at", "");
  calibration.peak_read_gbps = j.value("peak_read_gbps", 0.0);
  for (const auto& [id, entry] : j.at("stages").items()) {
    StageCalibration stage;
    entry.at("n").get_to(stage.n);
    entry.at("reference_time_ms").get_to(stage.reference_time_ms);
    if (entry.contains("bandwidth_gbps") && !entry.at("bandwidth_gbps").is_null()) {
      stage.bandwidth_gbps = entry.at("bandwidth_gbps").get<double>();
    }
    if (entry.contains("reference_metrics") && !entry.at("reference_metrics").is_null()) {
      stage.reference_metrics = entry.at("reference_metrics").get<KernelMetrics>();
    }
    if (entry.contains("baseline_time_ms") && !entry.at("baseline_time_ms").is_null()) {
      stage.baseline_time_ms = entry.at("baseline_time_ms").get<TimeStats>();
      stage.baseline_name = entry.value("baseline_name", "");
    }
    calibration.stages[id] = stage;
  }
}

const StageCalibration* calibrated_stage_at(const Calibration& calibration, const std::string& stage_id,
                                            std::int64_t n) {
  const auto found = calibration.stages.find(stage_id);
  return found == calibration.stages.end() || found->second.n != n ? nullptr : &found->second;
}

}  // namespace cudojo

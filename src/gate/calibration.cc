#include "gate/calibration.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

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
  if (const char* env = std::getenv("CUDOJO_CALIBRATION"); env && *env) return env;
  fs::path course = course_root.lexically_normal();
  if (course.filename().empty()) course = course.parent_path();  // "course/" names the same folder
  return course.parent_path() / "calibration";
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
    calibration.stages[id] = stage;
  }
}

}  // namespace cudojo

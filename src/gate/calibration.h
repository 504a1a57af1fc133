// Reference figures measured once per GPU model by `cudojo calibrate`, stored as JSON in
// calibration/<gpu-slug>.json (for example calibration/nvidia-h200.json). `check` gates against
// them when the file for its GPU is present, and measures the reference in the same run otherwise;
// the report also shows the previous stage's calibrated figures beside the learner's.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "measure/profiler.h"
#include "measure/stats.h"

namespace cudojo {

class CalibrationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StageCalibration {
  std::int64_t n = 0;
  TimeStats reference_time_ms;
  std::optional<double> bandwidth_gbps;
  std::optional<KernelMetrics> reference_metrics;
};

struct Calibration {
  std::string gpu;          // "NVIDIA H200"
  std::string arch;         // "sm_90"
  std::string driver;       // the driver's CUDA version
  std::string measured_at;  // UTC date and time
  double peak_read_gbps = 0;
  std::map<std::string, StageCalibration> stages;  // by stage id
};

// "NVIDIA H200" -> "nvidia-h200": letters and digits kept, lower-cased, runs of anything else "-".
std::string gpu_slug(const std::string& gpu_name);

// The calibration folder: $CUDOJO_CALIBRATION, else calibration/ beside the course folder.
std::filesystem::path default_calibration_dir(const std::filesystem::path& course_root);

// nullopt when there is no file for this GPU; CalibrationError when there is one and it is broken.
std::optional<Calibration> load_calibration(const std::filesystem::path& dir, const std::string& gpu_name);
std::filesystem::path save_calibration(const std::filesystem::path& dir, const Calibration& calibration);

void to_json(nlohmann::json& j, const Calibration& calibration);
void from_json(const nlohmann::json& j, Calibration& calibration);

}  // namespace cudojo

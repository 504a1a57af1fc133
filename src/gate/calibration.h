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
  // Stages gated against a library (CUB) record the library's time beside the reference's; the gate
  // itself always uses the library timed in the same run.
  std::string baseline_name;
  std::optional<TimeStats> baseline_time_ms;
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

// The calibration's figures for `stage_id` when it measured them at `n` elements (a stage whose size
// changed since is not read from old figures), else null.
const StageCalibration* calibrated_stage_at(const Calibration& calibration, const std::string& stage_id,
                                            std::int64_t n);

// Where the gate's reference figures came from, and the previous stage's calibrated reference,
// as the report shows them.
struct CalibrationUse {
  std::string file;  // empty when no calibration applied
  std::string measured_at;
  std::string note;  // e.g. why a calibration file was ignored
  std::string previous_stage;
  std::optional<TimeStats> previous_reference_time_ms;
  std::optional<double> previous_bandwidth_gbps;
  std::optional<double> previous_sm_throughput_pct;
};

// The calibration for `gpu_name` in `dir` (empty dir: none), and what the report says of it for
// `stage_id`. A broken file is named in the note, not trusted.
struct CalibrationLookup {
  std::optional<Calibration> calibration;
  CalibrationUse use;
};
CalibrationLookup look_up_calibration(const std::filesystem::path& dir, const std::string& gpu_name,
                                      const std::string& stage_id);

// The reference figures the gate compares with: calibrated figures for this stage and GPU win when
// present; otherwise the reference measured in this same run.
struct GateReference {
  std::optional<TimeStats> time_ms;
  std::optional<double> sm_throughput_pct;
  bool calibrated = false;
};
GateReference choose_gate_reference(const std::string& stage_id,
                                    const std::optional<Calibration>& calibration,
                                    const std::optional<TimeStats>& same_run_time_ms,
                                    const std::optional<KernelMetrics>& same_run_metrics);

void to_json(nlohmann::json& j, const Calibration& calibration);
void from_json(const nlohmann::json& j, Calibration& calibration);

}  // namespace cudojo

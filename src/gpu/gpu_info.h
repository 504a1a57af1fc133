// What the judge knows about the GPU it ran on. Plain data (no CUDA types), so reports, the server
// and calibration files can carry it on machines without a GPU.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace cudojo {

struct GpuInfo {
  std::string name;
  std::string arch;  // "sm_90"
  int sm_count = 0;
  std::string driver;         // "13.0" (the driver's CUDA version)
  std::string runtime;        // cudart's version
  double peak_read_gbps = 0;  // measured by the judge on this GPU, this run
};

void to_json(nlohmann::json& j, const GpuInfo& gpu);
void from_json(const nlohmann::json& j, GpuInfo& gpu);

}  // namespace cudojo

#include "gpu/gpu_info.h"

#include <nlohmann/json.hpp>

namespace cudojo {

void to_json(nlohmann::json& j, const GpuInfo& gpu) {
  j = {{"name", gpu.name},     {"arch", gpu.arch},       {"sm_count", gpu.sm_count},
       {"driver", gpu.driver}, {"runtime", gpu.runtime}, {"peak_read_gbps", gpu.peak_read_gbps}};
}

void from_json(const nlohmann::json& j, GpuInfo& gpu) {
  j.at("name").get_to(gpu.name);
  j.at("arch").get_to(gpu.arch);
  j.at("sm_count").get_to(gpu.sm_count);
  j.at("driver").get_to(gpu.driver);
  j.at("runtime").get_to(gpu.runtime);
  j.at("peak_read_gbps").get_to(gpu.peak_read_gbps);
}

}  // namespace cudojo

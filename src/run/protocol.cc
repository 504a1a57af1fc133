#include "run/protocol.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace cudojo {

std::string encode_base64(const std::vector<char>& bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(written));
  return text;
}

std::vector<char> decode_base64(const std::string& text) {
  if (text.size() % 4 != 0) throw std::runtime_error("a cubin's base64 text has a bad length");
  std::vector<char> bytes(3 * (text.size() / 4));
  const int decoded =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (decoded < 0) throw std::runtime_error("a cubin's base64 text does not decode");
  // EVP_DecodeBlock counts the padding as zero bytes.
  std::size_t padding = 0;
  for (auto it = text.rbegin(); it != text.rend() && *it == '=' && padding < 2; ++it) ++padding;
  bytes.resize(static_cast<std::size_t>(decoded) - padding);
  return bytes;
}

namespace {

nlohmann::json optional_build(const std::optional<BuiltKernel>& build) {
  return build ? nlohmann::json(*build) : nlohmann::json(nullptr);
}

}  // namespace

void to_json(nlohmann::json& j, const BuiltKernel& kernel) {
  j = {{"lowered_name", kernel.lowered_name},
       {"image_base64", encode_base64(kernel.image)},
       {"format", to_string(kernel.format)},
       {"abi", to_string(kernel.abi)}};
}

void from_json(const nlohmann::json& j, BuiltKernel& kernel) {
  j.at("lowered_name").get_to(kernel.lowered_name);
  kernel.image = decode_base64(j.at("image_base64").get<std::string>());
  const auto format = parse_image_format(j.value("format", std::string("cubin")));
  const auto abi = parse_parameter_abi(j.value("abi", std::string("plain")));
  if (!format || !abi) throw std::runtime_error("a build names an unknown image format or parameter ABI");
  kernel.format = *format;
  kernel.abi = *abi;
}

std::string_view to_string(WorkerMode mode) {
  switch (mode) {
    case WorkerMode::kCheck:
      return "check";
    case WorkerMode::kSanitize:
      return "sanitize";
    case WorkerMode::kLaunchForNcu:
      return "launch_for_ncu";
    case WorkerMode::kProfile:
      return "profile";
  }
  return "check";
}

namespace {

WorkerMode parse_mode(const std::string& name) {
  for (auto mode :
       {WorkerMode::kCheck, WorkerMode::kSanitize, WorkerMode::kLaunchForNcu, WorkerMode::kProfile}) {
    if (to_string(mode) == name) return mode;
  }
  throw std::runtime_error("unknown worker mode '" + name + "'");
}

}  // namespace

void to_json(nlohmann::json& j, const Job& job) {
  j = {{"stage", job.stage},
       {"source", job.source},
       {"file_name", job.file_name},
       {"reference_source", job.reference_source},
       {"arch", job.arch ? nlohmann::json(*job.arch) : nlohmann::json(nullptr)},
       {"cuda_include_dir", job.cuda_include_dir},
       {"seed", job.seed},
       {"arch_guess", job.arch_guess},
       {"max_log_bytes", job.max_log_bytes},
       {"mode", to_string(job.mode)},
       {"tool_size", job.tool_size},
       {"profile", job.profile},
       {"profile_elsewhere", job.profile_elsewhere},
       {"profiler_max_passes", job.profiler_max_passes},
       {"profile_sm_throughput", job.profile_sm_throughput},
       {"profiler_setup_wait_ms", job.profiler_setup_wait_ms},
       {"keep_alive", job.keep_alive},
       {"launch_submission_only", job.launch_submission_only},
       {"gpu_turns", job.gpu_turns},
       {"calibration_dir", job.calibration_dir},
       {"submission_build", optional_build(job.submission_build)},
       {"reference_build", optional_build(job.reference_build)},
       {"counted_build", optional_build(job.counted_build)},
       {"second_submission_build", optional_build(job.second_submission_build)},
       {"second_reference_build", optional_build(job.second_reference_build)},
       {"language", to_string(job.language)}};
}

void from_json(const nlohmann::json& j, Job& job) {
  j.at("stage").get_to(job.stage);
  j.at("source").get_to(job.source);
  j.at("file_name").get_to(job.file_name);
  j.at("reference_source").get_to(job.reference_source);
  if (!j.at("arch").is_null()) job.arch = j.at("arch").get<std::string>();
  j.at("cuda_include_dir").get_to(job.cuda_include_dir);
  j.at("seed").get_to(job.seed);
  job.arch_guess = j.value("arch_guess", job.arch_guess);
  j.at("max_log_bytes").get_to(job.max_log_bytes);
  job.mode = parse_mode(j.value("mode", "check"));
  job.tool_size = j.value("tool_size", job.tool_size);
  job.profile = j.value("profile", job.profile);
  job.profile_elsewhere = j.value("profile_elsewhere", false);
  job.profiler_max_passes = j.value("profiler_max_passes", job.profiler_max_passes);
  job.profile_sm_throughput = j.value("profile_sm_throughput", job.profile_sm_throughput);
  job.profiler_setup_wait_ms = j.value("profiler_setup_wait_ms", job.profiler_setup_wait_ms);
  job.keep_alive = j.value("keep_alive", false);
  job.launch_submission_only = j.value("launch_submission_only", false);
  job.gpu_turns = j.value("gpu_turns", false);
  job.calibration_dir = j.value("calibration_dir", std::string());
  if (j.contains("submission_build") && !j.at("submission_build").is_null()) {
    job.submission_build = j.at("submission_build").get<BuiltKernel>();
  }
  if (j.contains("reference_build") && !j.at("reference_build").is_null()) {
    job.reference_build = j.at("reference_build").get<BuiltKernel>();
  }
  if (j.contains("second_submission_build") && !j.at("second_submission_build").is_null()) {
    job.second_submission_build = j.at("second_submission_build").get<BuiltKernel>();
  }
  if (j.contains("second_reference_build") && !j.at("second_reference_build").is_null()) {
    job.second_reference_build = j.at("second_reference_build").get<BuiltKernel>();
  }
  if (j.contains("counted_build") && !j.at("counted_build").is_null()) {
    job.counted_build = j.at("counted_build").get<BuiltKernel>();
  }
  const auto language = parse_language(j.value("language", std::string("cuda")));
  if (!language) throw std::runtime_error("a job names an unknown language");
  job.language = *language;
}

}  // namespace cudojo

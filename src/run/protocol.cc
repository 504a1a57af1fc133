#include "run/protocol.h"

namespace cudojo {

void to_json(nlohmann::json& j, const Job& job) {
  j = {{"stage", job.stage},
       {"source", job.source},
       {"file_name", job.file_name},
       {"reference_source", job.reference_source},
       {"arch", job.arch ? nlohmann::json(*job.arch) : nlohmann::json(nullptr)},
       {"cuda_include_dir", job.cuda_include_dir},
       {"seed", job.seed},
       {"max_source_bytes", job.max_source_bytes},
       {"max_log_bytes", job.max_log_bytes},
       {"mode", job.mode},
       {"tool_size", job.tool_size},
       {"use_cupti", job.use_cupti}};
}

void from_json(const nlohmann::json& j, Job& job) {
  j.at("stage").get_to(job.stage);
  j.at("source").get_to(job.source);
  j.at("file_name").get_to(job.file_name);
  j.at("reference_source").get_to(job.reference_source);
  if (!j.at("arch").is_null()) job.arch = j.at("arch").get<std::string>();
  j.at("cuda_include_dir").get_to(job.cuda_include_dir);
  j.at("seed").get_to(job.seed);
  j.at("max_source_bytes").get_to(job.max_source_bytes);
  j.at("max_log_bytes").get_to(job.max_log_bytes);
  job.mode = j.value("mode", "check");
  job.tool_size = j.value("tool_size", std::int64_t{1000});
  job.use_cupti = j.value("use_cupti", true);
}

}  // namespace cudojo

// A job as the API shows it (GET /api/jobs/{id}, and every event of its stream), and the other
// JSON shapes more than one route answers with. docs/openapi.yaml describes them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "serve/store.h"

namespace cudojo {

// `position`: the job's place in the queue (shown while it is queued); `with_source`: the
// submission's text (GET /api/jobs/{id} has it; the stream's events do not).
nlohmann::json job_json(const JobRecord& job, std::int64_t position, bool with_source);
// One line of /api/history: never the source or the report.
nlohmann::json job_summary_json(const JobSummary& job);
nlohmann::json learner_json(const Learner& learner);
nlohmann::json optional_json(const std::optional<double>& value);

}  // namespace cudojo

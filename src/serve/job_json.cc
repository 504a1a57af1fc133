#include "serve/job_json.h"

namespace cudojo {

using nlohmann::json;

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json job_json(const JobRecord& job, std::int64_t position, bool with_source) {
  json j = {{"id", job.id},
            {"stage", job.stage},
            {"language", job.language},
            {"state", to_string(job.state)},
            {"phase", job.phase},
            {"attempts", job.attempts},
            {"verdict", job.verdict ? json(*job.verdict) : json(nullptr)},
            {"created_at", job.created_at},
            {"started_at", optional_json(job.started_at)},
            {"finished_at", optional_json(job.finished_at)}};
  if (job.state == JobState::kQueued) j["position"] = position;
  if (job.finished_at) j["queued_to_verdict_ms"] = (*job.finished_at - job.created_at) * 1000.0;
  if (job.report_json) {
    json report = json::parse(*job.report_json, nullptr, false);
    j["report"] = report.is_discarded() ? json(nullptr) : report;
  } else {
    j["report"] = nullptr;
  }
  j["profile"] = job.profile;
  // The Nsight Compute report kept with a profiled job (GET /api/jobs/{id}/ncu-report), or null.
  j["ncu_report"] = job.ncu_report_bytes ? json{{"bytes", *job.ncu_report_bytes}} : json(nullptr);
  if (with_source) j["source"] = job.source;
  return j;
}

json job_summary_json(const JobSummary& job) {
  return {{"id", job.id},
          {"stage", job.stage},
          {"language", job.language},
          {"state", to_string(job.state)},
          {"verdict", job.verdict ? json(*job.verdict) : json(nullptr)},
          {"time_ratio", optional_json(job.time_ratio)},
          {"baseline_ratio", optional_json(job.baseline_ratio)},
          {"created_at", job.created_at},
          {"finished_at", optional_json(job.finished_at)}};
}

json learner_json(const Learner& learner) {
  json shown = {{"id", learner.id}, {"name", learner.name}, {"leaderboard", learner.leaderboard}};
  if (learner.student_id) shown["student_id"] = *learner.student_id;
  return shown;
}

}  // namespace cudojo

// Links to one job (serve/store_shares.h). The job's owner makes one (a new link replaces the one
// before), asks whether one is live (never its token, which the store does not keep) and stops it; a
// member of staff's token is refused these as on every learner's route, and another learner's job
// answers 404 as one that does not exist. The class's staff list its live links and its instructors
// stop any, or turn links off for the class (PATCH /api/classes/{id}, api_classes.cc). Anyone holding a live
// link reads the job: its stage, language, verdict, report, source, when it was sent and the GPU that judged
// it, and nothing of the learner (no name, id, class or lateness). A link that opens nothing, whatever the
// reason (stopped, replaced, never made, malformed), gets one and the same answer, so a link's answer tells
// nothing about any other.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <utility>

#include "common/time_text.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/job_json.h"
#include "serve/store_internal.h"
#include "serve/store_shares.h"

namespace cudojo {

using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

constexpr const char* kNoSuchLink =
    "this link opens nothing: whoever made it stopped sharing the job or made a new link, or it was never "
    "a link here";

// What a link's token can be: the hex digits the store issues, at most kMaxShareTokenLength of them.
// Anything else is answered without asking the store.
bool could_be_link(const std::string& token) {
  return !token.empty() && token.size() <= store_internal::kMaxShareTokenLength &&
         std::all_of(token.begin(), token.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

// The GPU a report says judged the job (its gpu.name, else judged_by.gpu, where a node without one
// says "none"); null when it names none.
json judging_gpu_of(const json& report) {
  const auto named = [&](const char* part, const char* key) -> std::string {
    if (!report.is_object() || !report.contains(part) || !report[part].is_object()) return "";
    const json value = report[part].value(key, json(nullptr));
    return value.is_string() && value.get<std::string>() != "none" ? value.get<std::string>() : "";
  };
  for (const auto& [part, key] : {std::pair{"gpu", "name"}, std::pair{"judged_by", "gpu"}}) {
    if (const std::string gpu = named(part, key); !gpu.empty()) return gpu;
  }
  return nullptr;
}

// The day a job was sent (UTC, YYYY-MM-DD), not its second: a leaderboard shows when each named
// entry was judged, and an exact time would join a link to a name.
std::string utc_day(double seconds) { return time_text(seconds, "%Y-%m-%d", TimeZone::kUtc); }

}  // namespace

void Api::create_share(const Request& request, Response& response) {
  Learner learner;
  const auto job = owned_job(request, response, &learner);
  if (!job) return;
  if (job->state != JobState::kDone) {
    return send_error(response, 409,
                      "only a finished job can be shared; wait for its verdict, then make the link");
  }
  if (!store_usable(request, response)) return;
  std::optional<IssuedShare> issued;
  try {
    issued = store_.shares().create_share(job->id, learner.id, limits_.max_live_shares_per_learner);
  } catch (const StoreError& error) {
    return answer_store_error(request, response, error);
  }
  if (!issued) return send_error(response, 404, "no such job among yours");
  response.set_header("Cache-Control", "no-store");  // the token is shown this once
  send_json(response, 201,
            {{"url", "/#shared/" + issued->token},
             {"token", issued->token},
             {"job_id", job->id},
             {"created_at", issued->share.created_at}});
}

void Api::get_share(const Request& request, Response& response) {
  Learner learner;
  const auto job = owned_job(request, response, &learner);
  if (!job) return;
  const auto link = store_.shares().job_share(job->id, learner.id);
  const bool live = link && !link->revoked_at;
  const auto class_info = store_.classes().find_class(learner.class_id);
  json answer = {{"job_id", job->id},
                 {"shared", live},
                 {"sharing_open", !class_info || class_info->sharing_open},
                 {"stopped_by_staff", link && link->revoked_at && link->stopped_by.has_value()}};
  if (live) answer["created_at"] = link->created_at;
  response.set_header("Cache-Control", "no-store");
  send_json(response, 200, answer);
}

void Api::revoke_share(const Request& request, Response& response) {
  Learner learner;
  const auto job = owned_job(request, response, &learner);
  if (!job) return;
  if (!store_usable(request, response)) return;
  try {
    // A job not shared (or stopped already, in another tab) is stopped all the same.
    store_.shares().revoke_share(job->id, learner.id);
  } catch (const StoreError& error) {
    return answer_store_error(request, response, error);
  }
  response.status = 204;
}

json api_internal::share_state_json(const std::optional<JobShare>& link) {
  if (!link) return nullptr;
  return {{"live", !link->revoked_at},
          {"created_at", link->created_at},
          {"stopped_at", link->revoked_at ? json(*link->revoked_at) : json(nullptr)},
          {"stopped_by", link->stopped_by ? json(*link->stopped_by) : json(nullptr)}};
}

void Api::list_class_shares(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  int limit = 0;
  if (!page_limit(request, response, limit)) return;
  auto shares = store_.shares().class_shares(found->class_info.id, limit + 1);
  const bool more = static_cast<int>(shares.size()) > limit;
  if (more) shares.pop_back();
  json list = json::array();
  for (const auto& share : shares) {
    list.push_back({{"job_id", share.job_id},
                    {"learner", {{"id", share.learner_id}, {"name", share.learner_name}}},
                    {"stage", share.stage},
                    {"verdict", share.verdict ? json(*share.verdict) : json(nullptr)},
                    {"created_at", share.created_at}});
  }
  response.set_header("Cache-Control", "no-store");
  send_json(response, 200,
            {{"sharing_open", found->class_info.sharing_open}, {"shares", list}, {"more", more}});
}

void Api::stop_class_share(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto in_class = job_in_class(*found, request.match(2), response);
  if (!in_class) return;
  if (!store_usable(request, response)) return;
  const JobRecord& job = in_class->job;
  try {
    // A job whose link is stopped already (by its learner, or another member of staff) is stopped
    // all the same, and writes no audit entry.
    store_.shares().stop_class_share(
        found->class_info.id, job.id,
        {found->actor(), found->class_info.id, "share.stop",
         fmt::format("stopped the link to job #{} ({}, {})", job.id, in_class->learner.name, job.stage)});
  } catch (const StoreError& error) {
    return answer_store_error(request, response, error);
  }
  response.status = 204;
}

void Api::open_share(const Request& request, Response& response) {
  // Never kept by a browser or a proxy: a link that was stopped must stop showing the job.
  response.set_header("Cache-Control", "no-store");
  const std::string token = request.match(1);
  const auto job = could_be_link(token) ? store_.shares().shared_job(token) : std::nullopt;
  if (!job) return send_error(response, 404, kNoSuchLink);
  json report = nullptr;
  if (job->report_json) {
    report = json::parse(*job->report_json, nullptr, false);
    if (report.is_discarded()) report = nullptr;
  }
  const json gpu = judging_gpu_of(report);
  // The GPU is shown; which node and host judged it, and where the server keeps its calibration,
  // are the server's business, not a link holder's.
  if (report.is_object()) {
    report.erase("judged_by");
    if (report.contains("calibration") && report["calibration"].is_object())
      report["calibration"].erase("file");
  }
  const auto course = course_.current();
  const Stage* stage = find_stage(course->stages, job->stage);
  json shown = {{"stage", job->stage},
                {"stage_title", stage ? json(stage->title) : json(nullptr)},
                {"language", job->language},
                {"verdict", job->verdict ? json(*job->verdict) : json(nullptr)},
                {"report", report},
                {"source", job->source},
                {"submitted_on", utc_day(job->created_at)},
                {"gpu", gpu}};
  send_json(response, 200, with_version(std::move(shown), *job));
}

}  // namespace cudojo

// Job routes, all the signed-in learner's own: submitting (within the queue's limits for the
// learner, their address and everyone), reading a job, and following it as it is judged: a ticket
// for the stream (asked for with the token in the header), then the stream itself. A profiled job's
// Nsight Compute report is also the class's staff's to download, as the job is theirs to read.
#include <fmt/format.h>

#include <algorithm>

#include "http/client_address.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/dispatcher.h"
#include "serve/job_json.h"
#include "serve/store_internal.h"

namespace cudojo {

using api_internal::kSignInFirst;
using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

void Api::submit_job(const Request& request, Response& response) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return send_error(response, 400, "the body is not a JSON object");
  if (!body.contains("stage") || !body["stage"].is_string() || !body.contains("source") ||
      !body["source"].is_string()) {
    return send_error(response, 400, "send {\"stage\": \"reduction/3\", \"source\": \"...\"}");
  }
  const auto course = course_.current();  // kept while its stages are used
  const Stage* stage = find_stage(course->stages, body["stage"].get<std::string>());
  if (!stage)
    return send_error(response, 400, fmt::format("no stage '{}'", body["stage"].get<std::string>()));
  const std::string source = body["source"].get<std::string>();
  if (auto too_large = source_size_error(source.size(), judge_limits_))
    return send_error(response, 413, *too_large);
  // A NUL byte ends a string in the database's protocol: refused here, for both stores alike, rather
  // than stored cut short.
  if (source.find('\0') != std::string::npos)
    return send_error(response, 400, "the source holds a NUL character (\\u0000); no compiler takes one");
  Language language = Language::kCuda;
  if (std::string error; !api_internal::read_language(body, language, error))
    return send_error(response, 400, error);
  // "profile": hot spots and an Nsight Compute report, seconds of the GPU alone: asked for, never assumed.
  if (body.contains("profile") && !body["profile"].is_boolean())
    return send_error(response, 400, "\"profile\" is true or false (default false)");
  const bool profile = body.value("profile", false);
  if (profile && !profiling_)
    return send_error(
        response, 403,
        "profiled jobs are off on this server (cudojo serve --no-profiling): send the job without "
        "\"profile\"");
  // Idempotency-Key: the client's name for this submission, so that sending it again after a lost
  // answer (a dropped connection, a 503 while the database restarted) never queues it twice.
  const std::string key = request.header_value("Idempotency-Key");
  if (request.has_header("Idempotency-Key") &&
      (key.empty() || key.size() > 100 ||
       !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; }))) {
    return send_error(response, 400, "Idempotency-Key is 1 to 100 visible ASCII characters (a UUID, say)");
  }
  if (!store_usable(request, response)) return;
  Enqueued queued;
  try {
    queued = store_.submit(
        {learner->id, stage->id, source, std::string(to_string(language)), key,
         http::address_group(request.client_address), profile},
        {limits_.max_queue_length, limits_.max_pending_per_learner, limits_.max_pending_per_address});
  } catch (const StoreError& error) {
    return answer_store_error(request, response, error);
  }
  response.set_header("Location", fmt::format("/api/jobs/{}", queued.id));
  // The job is stored: from here on a failing read must not turn into an error, which a client
  // without a key would answer by queuing the submission again.
  auto stored = [&]<typename Read>(Read read) -> json {
    try {
      return read();
    } catch (const StoreError&) {
      return nullptr;
    }
  };
  if (queued.replayed) {
    // The job this key queued before, as it stands now.
    const json state = stored([&]() -> json {
      const auto job = store_.job(queued.id);
      return job ? json(std::string(to_string(job->state))) : json(nullptr);
    });
    return send_json(response, 200, {{"id", queued.id}, {"state", state}, {"replayed", true}});
  }
  dispatcher_.notify();
  send_json(response, 202,
            {{"id", queued.id}, {"state", "queued"}, {"position", stored([&]() -> json {
                                                        return store_.queue_position(queued.id);
                                                      })}});
}

std::optional<JobRecord> Api::owned_job(const Request& request, Response& response, Learner* owner) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return std::nullopt;
  if (owner) *owner = *learner;
  const auto id = parse_id(request.match(1));
  auto job = id ? store_.job(*id) : std::nullopt;
  // A rejudging's rerun stays the instructor's until it is applied (and then the result is in the
  // learner's own job).
  if (!job || job->learner_id != learner->id || job->rejudging_id) {
    send_error(response, 404, "no such job among yours");
    return std::nullopt;
  }
  return job;
}

void Api::get_job(const Request& request, Response& response) {
  Learner learner;
  auto job = owned_job(request, response, &learner);
  if (!job) return;
  const std::int64_t position = job->state == JobState::kQueued ? store_.queue_position(job->id) : 0;
  send_json(response, 200,
            with_version(with_lateness(job_json(*job, position, true), *job, learner.class_id), *job));
}

// A learner takes back a job that no judge has started: a class's queue before a deadline is long,
// and a learner who spotted their mistake should not hold a place in it (or one of their own four).
void Api::withdraw_job(const Request& request, Response& response) {
  Learner learner;
  auto job = owned_job(request, response, &learner);
  if (!job) return;
  if (!store_usable(request, response)) return;
  bool withdrawn = false;
  try {
    withdrawn = job->state == JobState::kQueued && store_.withdraw_queued(job->id, learner.id);
  } catch (const StoreError& error) {
    return answer_store_error(request, response, error);
  }
  if (!withdrawn) {
    return send_error(
        response, 409,
        "this job is being judged or was judged already; only a job still queued can be withdrawn");
  }
  send_json(response, 200, {{"id", job->id}, {"withdrawn", true}});
}

// Whoever may read the job downloads its report: its learner (not a rejudging's rerun, which is the
// staff's until applied), the staff of the learner's class (any role: the class job route's reading),
// an administrator. Anyone else is told there is no such job, as for the job itself.
void Api::job_ncu_report(const Request& request, Response& response) {
  const Caller who = caller(request);
  if (!who.learner && !who.staff) return send_error(response, 401, kSignInFirst);
  const auto id = parse_id(request.match(1));
  const auto job = id ? store_.job(*id) : std::nullopt;
  bool may_read = false;
  if (job && who.learner) {
    may_read = job->learner_id == who.learner->id && !job->rejudging_id;
  } else if (job && who.staff) {
    may_read = who.staff->admin;
    for (const auto& held : who.staff->roles) {
      if (may_read) break;
      may_read = class_access(*who.staff, held.first) != ClassAccess::kNone &&
                 store_.classes().roster_entry(held.first, job->learner_id).has_value();
    }
  }
  if (!may_read) return send_error(response, 404, "no such job among those you may read");
  const auto bytes = job->ncu_report_bytes ? store_.ncu_report(job->id) : std::nullopt;
  if (!bytes) return send_error(response, 404, "this job has no Nsight Compute report");
  response.set_header("Content-Disposition",
                      fmt::format("attachment; filename=\"cudojo-job-{}.ncu-rep\"", job->id));
  response.set_header("Cache-Control", "private, no-store");
  response.set_content(*bytes, "application/octet-stream");
}

json Api::with_version(json shown, const JobRecord& job) {
  if (!job.report_json) return shown;
  const json report = json::parse(*job.report_json, nullptr, false);
  if (report.is_discarded() || !report.contains("stage_version") || !report["stage_version"].is_object())
    return shown;
  const std::string judged_under = report["stage_version"].value("digest", "");
  const auto course = course_.current();
  const auto current = course->versions.find(job.stage);
  shown["stage_version"] = judged_under;
  shown["stage_version_current"] =
      current != course->versions.end() && current->second.digest == judged_under;
  return shown;
}

json Api::with_lateness(json shown, const JobRecord& job, std::int64_t class_id) {
  shown["late"] = is_late(store_.classes().deadlines(class_id), job.stage, job.created_at);
  return shown;
}

void Api::job_ticket(const Request& request, Response& response) {
  const auto job = owned_job(request, response);
  if (!job) return;
  const auto digest = store_.learner_token_digest(job->learner_id);
  if (!digest) return send_error(response, 401, kSignInFirst);
  const auto expires_at =
      static_cast<std::int64_t>(store_internal::now_seconds()) + limits_.stream_ticket_seconds;
  const std::string ticket = issue_stream_ticket(*digest, job->learner_id, job->id, expires_at);
  response.set_header("Cache-Control", "no-store");
  send_json(response, 201,
            {{"ticket", ticket},
             {"events", fmt::format("/api/jobs/{}/events?ticket={}", job->id, ticket)},
             {"expires_in", limits_.stream_ticket_seconds}});
}

void Api::job_events(const Request& request, Response& response) {
  if (request.has_param("token")) return send_error(response, 400, api_internal::kTokenInUrl);
  std::optional<JobRecord> job;
  if (const auto text = request.param("ticket")) {
    // A browser's EventSource: the ticket stands for the learner, for this job, once.
    const auto ticket = read_stream_ticket(*text);
    const auto id = parse_id(request.match(1));
    const auto now = static_cast<std::int64_t>(store_internal::now_seconds());
    const auto digest = ticket ? store_.learner_token_digest(ticket->learner_id) : std::nullopt;
    if (!ticket || !id || ticket->job_id != *id || ticket->expires_at < now || !digest ||
        !stream_ticket_is_signed_by(*text, *digest) || !used_tickets_.take(*ticket, now)) {
      return send_error(response, 401,
                        "this ticket is expired, used, or not for this job; ask for another (POST "
                        "/api/jobs/{id}/ticket)");
    }
    job = store_.job(*id);
    if (!job || job->learner_id != ticket->learner_id)
      return send_error(response, 404, "no such job among yours");
  } else {
    job = owned_job(request, response);
    if (!job) return;
  }
  response.set_header("Cache-Control", "no-cache");
  // nginx passes the stream on as it is written (docs/deploy/cudojo-locations.conf says so too).
  response.set_header("X-Accel-Buffering", "no");
  const JobEvent first =
      job_event(*job, job->state == JobState::kQueued ? store_.queue_position(job->id) : 0);
  if (first.final) {
    // Done already: the result, and the answer ends; no stream is held.
    return response.set_content(first.bytes, "text/event-stream");
  }
  auto place = streams_.reserve(job->learner_id);
  if (!place) {
    response.set_header("Retry-After", std::to_string(limits_.retry_after_seconds));
    return send_error(response, 429, "too many open event streams; poll GET /api/jobs/{id} instead");
  }
  response.set_content(first.bytes, "text/event-stream");
  response.on_stream_open = [this, place, id = job->id,
                             key = first.key](std::shared_ptr<http::ResponseStream> stream) {
    streams_.attach(place, id, key, std::move(stream));
  };
}

}  // namespace cudojo

#include "common/limits.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <type_traits>

namespace cudojo {

namespace {

template <auto Member>
std::string read_member(const ServeLimits& limits) {
  const auto value = limits.*Member;
  if constexpr (std::is_floating_point_v<decltype(value)>) {
    return fmt::format("{:g}", value);
  } else {
    return std::to_string(value);
  }
}

// Every limit is a positive number: zero connections, threads or seconds would make the server
// refuse everything (or wait for nothing), which no deployment means by it.
template <auto Member>
std::optional<std::string> write_member(ServeLimits& limits, const std::string& text) {
  using Value = std::remove_cvref_t<decltype(limits.*Member)>;
  Value value{};
  const char* end = text.data() + text.size();
  if constexpr (std::is_floating_point_v<Value>) {
    double parsed = 0;
    const auto [stop, error] = std::from_chars(text.data(), end, parsed);
    if (error != std::errc() || stop != end || !std::isfinite(parsed) || parsed <= 0)
      return fmt::format("'{}' is not a positive number", text);
    value = parsed;
  } else {
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error == std::errc::result_out_of_range) return fmt::format("'{}' is too large", text);
    if (error != std::errc() || stop != end || value <= 0)
      return fmt::format("'{}' is not a positive whole number", text);
  }
  limits.*Member = value;
  return std::nullopt;
}

#define CUDOJO_LIMIT(member, unit, meaning)                                                             \
  ServeLimitField {                                                                                     \
#member, unit, meaning, &read_member < &ServeLimits::member>, &write_member < &ServeLimits::member> \
  }

}  // namespace

const std::vector<ServeLimitField>& serve_limit_fields() {
  static const std::vector<ServeLimitField> fields = {
      CUDOJO_LIMIT(max_queue_length, "jobs", "queued + running jobs, everyone's, before 429"),
      CUDOJO_LIMIT(max_pending_per_learner, "jobs", "queued + running jobs of one learner before 429"),
      CUDOJO_LIMIT(max_pending_per_address, "jobs",
                   "queued + running jobs from one client address before 429"),
      CUDOJO_LIMIT(retry_after_seconds, "s", "the Retry-After sent with 429 and 503"),
      CUDOJO_LIMIT(max_new_learners_per_address_per_hour, "learners",
                   "sign-ups from one client address an hour"),
      CUDOJO_LIMIT(max_joins_per_class_per_hour, "learners",
                   "learners joining one class by its invite code an hour"),
      CUDOJO_LIMIT(max_roster_rows, "learners", "learners in one roster import"),
      CUDOJO_LIMIT(max_learners_per_class, "learners", "learners one class holds, removed ones not counted"),
      CUDOJO_LIMIT(max_failed_joins_per_address_per_hour, "joins",
                   "wrong invite codes from one client address an hour"),
      CUDOJO_LIMIT(max_draft_saves_per_minute, "saves", "drafts one learner saves or deletes a minute"),
      CUDOJO_LIMIT(max_jobs_per_rejudging, "jobs", "finished jobs one rejudging judges again"),
      CUDOJO_LIMIT(max_live_shares_per_learner, "links", "jobs one learner shares at once, a link each"),
      CUDOJO_LIMIT(io_threads, "threads", "threads running the event loop"),
      CUDOJO_LIMIT(handler_threads, "threads", "threads running routes that call the store"),
      CUDOJO_LIMIT(max_waiting_requests, "requests", "requests waiting for a handler thread before 503"),
      CUDOJO_LIMIT(max_connections, "connections", "open connections, everyone's"),
      CUDOJO_LIMIT(max_connections_per_address, "connections", "open connections from one peer address"),
      CUDOJO_LIMIT(listen_backlog, "connections", "connections the kernel queues before they are accepted"),
      CUDOJO_LIMIT(header_deadline_ms, "ms", "a request's line and header arrive within this"),
      CUDOJO_LIMIT(body_deadline_ms, "ms", "a request's body arrives within this of its header"),
      CUDOJO_LIMIT(write_deadline_ms, "ms", "an answer is taken by the client within this"),
      CUDOJO_LIMIT(max_large_answers, "answers",
                   "answers over 64 KiB sent at once; the rest wait their turn"),
      CUDOJO_LIMIT(max_header_bytes, "bytes", "request line and header fields before 431"),
      CUDOJO_LIMIT(max_header_fields, "fields", "header fields of one request before 431"),
      CUDOJO_LIMIT(max_target_bytes, "bytes", "a request's path and query before 414"),
      CUDOJO_LIMIT(max_request_bytes, "bytes", "a request's body before 413"),
      CUDOJO_LIMIT(max_event_streams, "streams", "open event streams, everyone's, before 429"),
      CUDOJO_LIMIT(max_event_streams_per_learner, "streams",
                   "a learner's streams; the next closes the oldest"),
      CUDOJO_LIMIT(event_stream_max_seconds, "s", "how long one event stream stays open"),
      CUDOJO_LIMIT(event_poll_ms, "ms", "how often the open streams' jobs are read"),
      CUDOJO_LIMIT(event_heartbeat_ms, "ms", "how often an unchanged stream sends a comment"),
      CUDOJO_LIMIT(max_stream_backlog_bytes, "bytes", "unsent bytes of one stream before it is closed"),
      CUDOJO_LIMIT(stream_ticket_seconds, "s", "how long a stream ticket opens its stream"),
      CUDOJO_LIMIT(history_limit, "jobs", "most jobs one page of /api/history returns"),
      CUDOJO_LIMIT(history_default_limit, "jobs", "jobs one page of /api/history returns by default"),
      CUDOJO_LIMIT(leaderboard_limit, "entries", "entries one stage's leaderboard returns"),
      CUDOJO_LIMIT(audit_limit, "entries", "most entries one page of an audit log returns"),
      CUDOJO_LIMIT(audit_default_limit, "entries", "entries one page of an audit log returns by default"),
      CUDOJO_LIMIT(max_job_attempts, "starts", "starts of one job before it fails with internal_error"),
      CUDOJO_LIMIT(dispatcher_idle_poll_ms, "ms", "how often an idle judge looks at the queue"),
      CUDOJO_LIMIT(judge_slots_per_gpu, "jobs", "jobs judged at once on one GPU (without --workers)"),
      CUDOJO_LIMIT(database_busy_timeout_ms, "ms", "how long a SQLite call waits for another's write lock"),
      CUDOJO_LIMIT(stop_grace_ms, "ms", "how long running jobs get to finish after SIGTERM"),
      CUDOJO_LIMIT(job_lease_seconds, "s", "a running job's lease (--lease-seconds)"),
      CUDOJO_LIMIT(heartbeat_ms, "ms", "how often a node renews its leases"),
      CUDOJO_LIMIT(store_retry_ms, "ms", "how often a node retries a store it cannot reach"),
      CUDOJO_LIMIT(node_listed_seconds, "s", "a node not seen for this long is not listed"),
      CUDOJO_LIMIT(postgres_connections, "connections", "connections to a PostgreSQL store"),
  };
  return fields;
}

#undef CUDOJO_LIMIT

std::optional<std::string> apply_serve_limit(ServeLimits& limits, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    return fmt::format("'{}' is not NAME=VALUE (cudojo serve --list-limits names them)", assignment);
  const std::string name = assignment.substr(0, equals);
  const std::string value = assignment.substr(equals + 1);
  for (const ServeLimitField& field : serve_limit_fields()) {
    if (name != field.name) continue;
    if (auto problem = field.write(limits, value)) return fmt::format("--limit {}: {}", name, *problem);
    return std::nullopt;
  }
  std::string known;
  for (const ServeLimitField& field : serve_limit_fields())
    known += fmt::format("{}{}", known.empty() ? "" : ", ", field.name);
  return fmt::format("no limit is called '{}'; the limits are: {}", name, known);
}

}  // namespace cudojo

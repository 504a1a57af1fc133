// PostgresStore's queue: submitting under the limits (counted under one advisory lock across
// every node), counting, claiming with SKIP LOCKED in round robin, leases, progress and results
// recorded under the current claim, and the sweep of lapsed leases.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::job_columns;
using postgres_internal::kQueueLock;
using postgres_internal::Params;
using postgres_internal::parse_state;
using postgres_internal::read_job;
using postgres_internal::Rows;

Enqueued PostgresStore::submit(const Submission& submission, const QueueLimits& limits) {
  return with_session([&](Session& session) {
    return session.transaction([&]() -> Enqueued {
      // Every node's submit waits here for the one before it to commit, so the key lookup and the
      // counts below see every job queued before this one.
      session.run(fmt::format("SELECT pg_advisory_xact_lock({})", kQueueLock));
      if (!submission.client_key.empty()) {
        Rows seen = session.run(
            "SELECT id, stage = $3 AND source = $4 AND language = $5 AND profile = $6 FROM jobs"
            " WHERE learner_id = $1 AND client_key = $2",
            Params()
                .add(submission.learner_id)
                .add(submission.client_key)
                .add(submission.stage)
                .add(submission.source)
                .add(submission.language)
                .add(submission.profile));
        if (!seen.empty()) {
          if (!seen.boolean(0, 1)) {
            throw StoreError(StoreErrorCode::kKeyReused,
                             fmt::format("this Idempotency-Key was used for job {}, a different submission",
                                         seen.integer(0, 0)));
          }
          return {seen.integer(0, 0), true};
        }
      }
      // The pending states by name, not `state <> 'done'`, so the count can walk jobs_by_state over
      // the pending jobs instead of every job ever judged. An empty address is stored as NULL, which
      // `client_address = ''` never matches.
      Rows counts = session.run(
          "SELECT COUNT(*), COUNT(*) FILTER (WHERE learner_id = $1),"
          " COUNT(*) FILTER (WHERE client_address = $2) FROM jobs WHERE state IN ('queued', 'running')"
          " AND rejudging_id IS NULL",
          Params().add(submission.learner_id).add(submission.client_address));
      if (counts.integer(0, 0) >= limits.max_queue_length) {
        throw StoreError(StoreErrorCode::kQueueFull, "the queue is full; try again shortly");
      }
      if (counts.integer(0, 1) >= limits.max_pending_per_learner) {
        throw StoreError(
            StoreErrorCode::kLearnerBusy,
            fmt::format("you already have {} jobs waiting or running", limits.max_pending_per_learner));
      }
      if (!submission.client_address.empty() && counts.integer(0, 2) >= limits.max_pending_per_address) {
        throw StoreError(StoreErrorCode::kAddressBusy,
                         store_internal::address_busy_message(counts.integer(0, 2)));
      }
      Rows inserted = session.run(
          "INSERT INTO jobs (learner_id, stage, source, state, created_at, language, client_key, "
          "client_address, profile)"
          " VALUES ($1, $2, $3, 'queued', " CUDOJO_NOW
          ", $4, NULLIF($5, ''), NULLIF($6, ''), $7) RETURNING id",
          Params()
              .add(submission.learner_id)
              .add(submission.stage)
              .add(submission.source)
              .add(submission.language)
              .add(submission.client_key)
              .add(submission.client_address)
              .add(submission.profile));
      session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      return {inserted.integer(0, 0), false};
    });
  });
}

std::int64_t PostgresStore::pending_count() {
  return with_session([](Session& session) {
    return session.run("SELECT COUNT(*) FROM jobs WHERE state <> 'done' AND rejudging_id IS NULL")
        .integer(0, 0);
  });
}

std::int64_t PostgresStore::pending_count(std::int64_t learner_id) {
  return with_session([&](Session& session) {
    return session
        .run("SELECT COUNT(*) FROM jobs WHERE state <> 'done' AND learner_id = $1 AND rejudging_id IS NULL",
             Params().add(learner_id))
        .integer(0, 0);
  });
}

std::int64_t PostgresStore::queue_position(std::int64_t job_id) {
  return with_session([&](Session& session) {
    return session
        .run(
            "SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND id < $1 AND rejudging_id IS NULL"
            " AND EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND state = 'queued')",
            Params().add(job_id))
        .integer(0, 0);
  });
}

bool PostgresStore::withdraw_queued(std::int64_t job_id, std::int64_t learner_id) {
  return with_session([&](Session& session) {
    // A claim holding the row's lock makes this wait, then see 'running' and delete nothing.
    return session
               .run(
                   "DELETE FROM jobs WHERE id = $1 AND learner_id = $2 AND state = 'queued'"
                   " AND rejudging_id IS NULL RETURNING id",
                   Params().add(job_id).add(learner_id))
               .size() > 0;
  });
}

std::optional<JobRecord> PostgresStore::claim_next(const std::string& holder, double lease_seconds) {
  return with_session([&](Session& session) {
    return session.transaction([&]() -> std::optional<JobRecord> {
      // The round robin's pick, skipping rows another dispatcher has locked this instant: each
      // concurrent claim takes a different job and none waits.
      Rows claimed = session.run(
          fmt::format("WITH next AS (SELECT j.id FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
                      " WHERE j.state = 'queued' ORDER BY j.rejudging_id IS NOT NULL,"
                      " CASE WHEN j.rejudging_id IS NULL THEN COALESCE(l.last_served_at, 0) END, j.id"
                      " LIMIT 1 FOR UPDATE OF j SKIP LOCKED)"
                      " UPDATE jobs SET state = 'running', phase = 'starting', attempts = jobs.attempts + 1,"
                      " started_at = " CUDOJO_NOW ", holder = $1, lease_until = " CUDOJO_NOW " + $2"
                      " FROM next WHERE jobs.id = next.id RETURNING {}",
                      job_columns("jobs")),
          Params().add(holder).add(lease_seconds));
      if (claimed.empty()) return std::nullopt;
      JobRecord job = read_job(claimed, 0);
      // A report an earlier attempt kept belongs to a result that was never recorded.
      session.run("DELETE FROM ncu_reports WHERE job_id = $1", Params().add(job.id));
      if (!job.rejudging_id) {  // a rerun is the instructor's, not a turn of its learner's
        session.run("UPDATE learners SET last_served_at = $1 WHERE id = $2",
                    Params().add(job.started_at.value_or(0)).add(job.learner_id));
      }
      return job;
    });
  });
}

// The claim's condition over $1 (id), $2 (holder) and $3 (attempt).
#define CUDOJO_CURRENT_CLAIM " id = $1 AND state = 'running' AND holder = $2 AND attempts = $3"

namespace {
Params claim_params(const JobClaim& claim) {
  return Params().add(claim.id).add(claim.holder).add(claim.attempt);
}
}  // namespace

int PostgresStore::renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) {
  if (claims.empty()) return 0;
  return with_session([&](Session& session) {
    return session.transaction([&] {
      int renewed = 0;
      for (const JobClaim& claim : claims) {
        renewed += session
                       .run("UPDATE jobs SET lease_until = " CUDOJO_NOW " + $4 WHERE" CUDOJO_CURRENT_CLAIM,
                            claim_params(claim).add(lease_seconds))
                       .affected();
      }
      return renewed;
    });
  });
}

bool PostgresStore::set_phase(const JobClaim& claim, const std::string& phase) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      return session
                 .run("UPDATE jobs SET phase = $4 WHERE" CUDOJO_CURRENT_CLAIM, claim_params(claim).add(phase))
                 .affected() == 1;
    });
  });
}

bool PostgresStore::finish(const JobClaim& claim, const std::string& verdict,
                           const std::string& report_json) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      if (session
              .run("UPDATE jobs SET state = 'done', phase = 'done', verdict = $4, report = $5, finished_at "
                   "= " CUDOJO_NOW ", lease_until = NULL WHERE" CUDOJO_CURRENT_CLAIM,
                   claim_params(claim).add(verdict).add(report_json))
              .affected() == 1) {
        return true;
      }
      // Already recorded under this very claim: an earlier call committed but its answer was lost
      // with the connection, and the caller asked again.
      return !session
                  .run(
                      "SELECT 1 FROM jobs WHERE id = $1 AND state = 'done' AND holder = $2 AND attempts = $3"
                      " AND verdict = $4",
                      claim_params(claim).add(verdict))
                  .empty();
    });
  });
}

bool PostgresStore::requeue(const JobClaim& claim, const std::string& phase) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      const bool requeued = session
                                .run(
                                    "UPDATE jobs SET state = 'queued', phase = $4, holder = NULL,"
                                    " lease_until = NULL WHERE" CUDOJO_CURRENT_CLAIM,
                                    claim_params(claim).add(phase))
                                .affected() == 1;
      if (requeued) session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      return requeued;
    });
  });
}
#undef CUDOJO_CURRENT_CLAIM

int PostgresStore::requeue_expired() {
  const std::string gave_up = gave_up_report_json();
  return with_session([&](Session& session) {
    return session.transaction([&] {
      // Rows another transaction holds are skipped, not waited for: a second node sweeping at the
      // same moment, or a cut-off node's backend still holding its locks (the server ends it within
      // seconds, and a later sweep takes the job).
      const int failed =
          session
              .run("WITH lapsed AS (SELECT id FROM jobs WHERE state = 'running' AND lease_until < " CUDOJO_NOW
                   " AND attempts >= $2 FOR UPDATE SKIP LOCKED)"
                   " UPDATE jobs SET state = 'done', phase = 'done', verdict = 'internal_error', report = $1,"
                   " finished_at = " CUDOJO_NOW ", lease_until = NULL FROM lapsed WHERE jobs.id = lapsed.id",
                   Params().add(gave_up).add(kMaxAttempts))
              .affected();
      const int requeued =
          session
              .run("WITH lapsed AS (SELECT id FROM jobs WHERE state = 'running' AND lease_until < " CUDOJO_NOW
                   " AND attempts < $1 FOR UPDATE SKIP LOCKED)"
                   " UPDATE jobs SET state = 'queued', phase = 'queued again: its judge stopped answering',"
                   " holder = NULL, lease_until = NULL FROM lapsed WHERE jobs.id = lapsed.id",
                   Params().add(kMaxAttempts))
              .affected();
      if (requeued > 0) session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      return failed + requeued;
    });
  });
}

std::optional<JobRecord> PostgresStore::job(std::int64_t job_id) {
  return with_session([&](Session& session) -> std::optional<JobRecord> {
    Rows found = session.run(
        fmt::format("SELECT {}, (SELECT bytes FROM ncu_reports WHERE job_id = $1) FROM jobs WHERE id = $1",
                    job_columns("jobs")),
        Params().add(job_id));
    if (found.empty()) return std::nullopt;
    JobRecord job = read_job(found, 0);
    job.ncu_report_bytes = found.optional_integer(0, 17);
    return job;
  });
}

// The bytes travel as hex text (every parameter and column here is text), 2 characters a byte.
bool PostgresStore::keep_ncu_report(const JobClaim& claim, const std::string& bytes) {
  if (bytes.empty() || bytes.size() > JudgeLimits{}.max_ncu_report_bytes) return false;
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const unsigned char c : bytes) {
    hex += "0123456789abcdef"[c >> 4];
    hex += "0123456789abcdef"[c & 15];
  }
  return with_session([&](Session& session) {
    return session
               .run(
                   "INSERT INTO ncu_reports (job_id, bytes, report, kept_at) SELECT id, $4, decode($5, "
                   "'hex'),"
                   " " CUDOJO_NOW
                   " FROM jobs WHERE id = $1 AND state = 'running' AND holder = $2"
                   " AND attempts = $3 ON CONFLICT (job_id) DO UPDATE SET bytes = excluded.bytes,"
                   " report = excluded.report, kept_at = excluded.kept_at RETURNING job_id",
                   Params()
                       .add(claim.id)
                       .add(claim.holder)
                       .add(claim.attempt)
                       .add(static_cast<std::int64_t>(bytes.size()))
                       .add(hex))
               .size() > 0;
  });
}

std::optional<std::string> PostgresStore::ncu_report(std::int64_t job_id) {
  const auto hex = with_session([&](Session& session) -> std::optional<std::string> {
    Rows found =
        session.run("SELECT encode(report, 'hex') FROM ncu_reports WHERE job_id = $1", Params().add(job_id));
    if (found.empty()) return std::nullopt;
    return found.text(0, 0);
  });
  if (!hex) return std::nullopt;
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string bytes(hex->size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(nibble((*hex)[2 * i]) << 4 | nibble((*hex)[2 * i + 1]));
  return bytes;
}

std::vector<JobProgress> PostgresStore::job_progress(const std::vector<std::int64_t>& job_ids) {
  if (job_ids.empty()) return {};
  // One statement for any number of ids, sent as one array, so states and positions are of one
  // snapshot. The positions come from one ranked walk of the queue up to the last queued job asked
  // about (none when none is queued), not a count each. A large source or report is stored apart
  // from its row (TOAST), so reading state and phase never reads them.
  const std::string ids = fmt::format("{{{}}}", fmt::join(job_ids, ","));
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "WITH wanted AS (SELECT id, state, phase FROM jobs WHERE id = ANY($1::bigint[])),"
        " ahead AS (SELECT id, ROW_NUMBER() OVER (ORDER BY id) - 1 AS position FROM jobs"
        "  WHERE state = 'queued' AND rejudging_id IS NULL"
        "  AND id <= (SELECT MAX(id) FROM wanted WHERE state = 'queued'))"
        " SELECT w.id, w.state, w.phase, COALESCE(a.position, 0)"
        " FROM wanted AS w LEFT JOIN ahead AS a ON a.id = w.id",
        Params().add(ids));
    std::vector<JobProgress> jobs;
    for (int row = 0; row < rows.size(); ++row) {
      jobs.push_back(
          {rows.integer(row, 0), parse_state(rows.text(row, 1)), rows.text(row, 2), rows.integer(row, 3)});
    }
    return jobs;
  });
}

}  // namespace cudojo

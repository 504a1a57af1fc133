// PostgresStore's links to one job (serve/store_shares.h), with the answers SqliteStore gives. Making a
// link locks its learner's row first, so two nodes making links for one learner at once count each
// other's (the cap holds) and never write the same job's row together.
#include <fmt/format.h>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::job_columns;
using postgres_internal::Params;
using postgres_internal::read_job;
using postgres_internal::Rows;

std::optional<IssuedShare> PostgresStore::create_share(std::int64_t job_id, std::int64_t learner_id,
                                                       std::int64_t max_live) {
  IssuedShare issued;
  issued.token = store_internal::random_token();
  const std::string digest = token_digest(issued.token);
  return with_session([&](Session& session) -> std::optional<IssuedShare> {
    const std::optional<double> made = session.transaction([&]() -> std::optional<double> {
      session.run("SELECT 1 FROM learners WHERE id = $1 FOR UPDATE", Params().add(learner_id));
      Rows job = session.run(
          "SELECT state, (SELECT COUNT(*) FROM job_shares WHERE learner_id = $2 AND revoked_at IS NULL"
          " AND job_id <> $1) FROM jobs WHERE id = $1 AND learner_id = $2 AND rejudging_id IS NULL",
          Params().add(job_id).add(learner_id));
      if (job.empty()) return std::nullopt;
      store_internal::check_new_share(job.text(0, 0), job.integer(0, 1), max_live);
      return session
          .run(
              "INSERT INTO job_shares (job_id, learner_id, token_sha256, created_at)"
              " VALUES ($1, $2, $3, " CUDOJO_NOW
              ") ON CONFLICT (job_id) DO UPDATE SET learner_id = excluded.learner_id,"
              " token_sha256 = excluded.token_sha256, created_at = excluded.created_at, revoked_at = NULL"
              " RETURNING created_at",
              Params().add(job_id).add(learner_id).add(digest))
          .real(0, 0);
    });
    if (!made) return std::nullopt;
    issued.share = {job_id, learner_id, *made, std::nullopt};
    return issued;
  });
}

bool PostgresStore::revoke_share(std::int64_t job_id, std::int64_t learner_id) {
  return with_session([&](Session& session) {
    return session
               .run("UPDATE job_shares SET revoked_at = " CUDOJO_NOW
                    " WHERE job_id = $1 AND learner_id = $2 AND revoked_at IS NULL RETURNING job_id",
                    Params().add(job_id).add(learner_id))
               .size() > 0;
  });
}

std::optional<JobShare> PostgresStore::live_share(std::int64_t job_id, std::int64_t learner_id) {
  return with_session([&](Session& session) -> std::optional<JobShare> {
    Rows found = session.run(
        "SELECT created_at FROM job_shares WHERE job_id = $1 AND learner_id = $2 AND revoked_at IS NULL",
        Params().add(job_id).add(learner_id));
    if (found.empty()) return std::nullopt;
    return JobShare{job_id, learner_id, found.real(0, 0), std::nullopt};
  });
}

std::optional<JobRecord> PostgresStore::shared_job(const std::string& token) {
  if (token.empty() || token.size() > store_internal::kMaxShareTokenLength) return std::nullopt;
  const std::string digest = token_digest(token);
  return with_session([&](Session& session) -> std::optional<JobRecord> {
    Rows found = session.run(
        fmt::format(
            "SELECT {} FROM job_shares AS s JOIN jobs AS j ON j.id = s.job_id AND j.learner_id = s.learner_id"
            " JOIN learners AS l ON l.id = s.learner_id WHERE s.token_sha256 = $1"
            " AND s.revoked_at IS NULL AND l.removed_at IS NULL AND j.state = 'done'"
            " AND j.rejudging_id IS NULL",
            job_columns("j")),
        Params().add(digest));
    if (found.empty()) return std::nullopt;
    return read_job(found, 0);
  });
}

}  // namespace cudojo

// PostgresStore's links to one job (serve/store_shares.h), with the answers SqliteStore gives. Making a
// link locks its learner's row first, so two nodes making links for one learner at once count each
// other's (the cap holds) and never write the same job's row together, and reads the class's switch
// FOR SHARE, so turning links off (which updates that row) waits for it or it for that.
#include <fmt/format.h>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::insert_audit;
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
      Rows sharing = session.run(
          "SELECT c.sharing_open FROM classes AS c JOIN learners AS l ON l.class_id = c.id WHERE l.id = $1"
          " FOR SHARE OF c",
          Params().add(learner_id));
      Rows job = session.run(
          "SELECT state, (SELECT COUNT(*) FROM job_shares WHERE learner_id = $2 AND revoked_at IS NULL"
          " AND job_id <> $1) FROM jobs WHERE id = $1 AND learner_id = $2 AND rejudging_id IS NULL",
          Params().add(job_id).add(learner_id));
      if (job.empty()) return std::nullopt;
      store_internal::check_new_share(job.text(0, 0), job.integer(0, 1), max_live,
                                      !sharing.empty() && sharing.boolean(0, 0));
      return session
          .run(
              "INSERT INTO job_shares (job_id, learner_id, token_sha256, created_at)"
              " VALUES ($1, $2, $3, " CUDOJO_NOW
              ") ON CONFLICT (job_id) DO UPDATE SET learner_id = excluded.learner_id,"
              " token_sha256 = excluded.token_sha256, created_at = excluded.created_at, revoked_at = NULL,"
              " stopped_by = NULL RETURNING created_at",
              Params().add(job_id).add(learner_id).add(digest))
          .real(0, 0);
    });
    if (!made) return std::nullopt;
    issued.share = {job_id, learner_id, *made, std::nullopt, std::nullopt};
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

std::optional<JobShare> PostgresStore::job_share(std::int64_t job_id, std::int64_t learner_id) {
  return with_session([&](Session& session) -> std::optional<JobShare> {
    Rows found = session.run(
        "SELECT created_at, revoked_at, stopped_by FROM job_shares WHERE job_id = $1 AND learner_id = $2",
        Params().add(job_id).add(learner_id));
    if (found.empty()) return std::nullopt;
    return JobShare{job_id, learner_id, found.real(0, 0), found.optional_real(0, 1),
                    found.optional_text(0, 2)};
  });
}

std::vector<ClassShare> PostgresStore::class_shares(std::int64_t class_id, int limit) {
  return with_session([&](Session& session) {
    Rows found = session.run(
        "SELECT s.job_id, s.learner_id, l.name, j.stage, j.verdict, s.created_at FROM job_shares AS s"
        " JOIN jobs AS j ON j.id = s.job_id AND j.learner_id = s.learner_id"
        " JOIN learners AS l ON l.id = s.learner_id WHERE l.class_id = $1 AND s.revoked_at IS NULL"
        " AND l.removed_at IS NULL AND j.state = 'done' AND j.rejudging_id IS NULL"
        " ORDER BY s.created_at DESC, s.job_id DESC LIMIT $2",
        Params().add(class_id).add(static_cast<std::int64_t>(limit)));
    std::vector<ClassShare> shares;
    for (int row = 0; row < found.size(); ++row) {
      shares.push_back({found.integer(row, 0), found.integer(row, 1), found.text(row, 2), found.text(row, 3),
                        found.optional_text(row, 4), found.real(row, 5)});
    }
    return shares;
  });
}

bool PostgresStore::stop_class_share(std::int64_t class_id, std::int64_t job_id, const AuditNote& note) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      const bool stopped = session
                               .run("UPDATE job_shares SET revoked_at = " CUDOJO_NOW
                                    ", stopped_by = $3 WHERE job_id = $1 AND revoked_at IS NULL"
                                    " AND learner_id IN (SELECT id FROM learners WHERE class_id = $2)"
                                    " RETURNING job_id",
                                    Params().add(job_id).add(class_id).add(note.actor.name))
                               .size() > 0;
      if (stopped) insert_audit(session, note);
      return stopped;
    });
  });
}

std::optional<JobRecord> PostgresStore::shared_job(const std::string& token) {
  if (token.empty() || token.size() > store_internal::kMaxShareTokenLength) return std::nullopt;
  const std::string digest = token_digest(token);
  return with_session([&](Session& session) -> std::optional<JobRecord> {
    Rows found = session.run(
        fmt::format(
            "SELECT {} FROM job_shares AS s JOIN jobs AS j ON j.id = s.job_id AND j.learner_id = s.learner_id"
            " JOIN learners AS l ON l.id = s.learner_id"
            " JOIN classes AS c ON c.id = l.class_id AND c.sharing_open WHERE s.token_sha256 = $1"
            " AND s.revoked_at IS NULL AND l.removed_at IS NULL AND j.state = 'done'"
            " AND j.rejudging_id IS NULL",
            job_columns("j")),
        Params().add(digest));
    if (found.empty()) return std::nullopt;
    return read_job(found, 0);
  });
}

}  // namespace cudojo

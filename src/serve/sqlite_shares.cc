// SqliteStore's links to one job (serve/store_shares.h): the table, made by schema step 8; making a
// link (the one before replaced) under the write lock, so the count of a learner's live links and the
// write see the same rows; stopping one; and the job a live link's token opens.
#include <fmt/format.h>
#include <sqlite3.h>

#include "serve/sqlite_statement.h"
#include "serve/sqlite_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using sqlite_internal::in_transaction;
using sqlite_internal::kJobColumns;
using sqlite_internal::read_job;
using sqlite_internal::Statement;
using store_internal::now_seconds;

// One row per job that was ever shared: its link's digest (a new link replaces it), who made it and
// when, and when it was stopped. A job that is shared is finished and never deleted (only queued jobs
// are withdrawn, and reruns are never shared), so the foreign key to jobs holds.
void SqliteStore::migrate_to_shares() {
  execute(
      "CREATE TABLE job_shares (job_id INTEGER PRIMARY KEY REFERENCES jobs(id),"
      " learner_id INTEGER NOT NULL REFERENCES learners(id), token_sha256 TEXT NOT NULL UNIQUE,"
      " created_at REAL NOT NULL, revoked_at REAL)");
  // A learner's live links, counted before each new one.
  execute("CREATE INDEX job_shares_live ON job_shares(learner_id) WHERE revoked_at IS NULL");
}

std::optional<IssuedShare> SqliteStore::create_share(std::int64_t job_id, std::int64_t learner_id,
                                                     std::int64_t max_live) {
  IssuedShare issued;
  issued.token = store_internal::random_token();
  issued.share = {job_id, learner_id, now_seconds(), std::nullopt};
  std::lock_guard lock(mutex_);
  const bool made = in_transaction(db_, [&] {
    Statement job(
        db_,
        "SELECT state, (SELECT COUNT(*) FROM job_shares WHERE learner_id = ?2 AND revoked_at IS NULL"
        " AND job_id <> ?1) FROM jobs WHERE id = ?1 AND learner_id = ?2 AND rejudging_id IS NULL");
    job.bind(1, job_id).bind(2, learner_id);
    if (!job.step()) return false;
    store_internal::check_new_share(job.text(0), job.integer(1), max_live);
    Statement write(
        db_,
        "INSERT INTO job_shares (job_id, learner_id, token_sha256, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (job_id) DO UPDATE SET learner_id = excluded.learner_id,"
        " token_sha256 = excluded.token_sha256, created_at = excluded.created_at, revoked_at = NULL");
    write.bind(1, job_id)
        .bind(2, learner_id)
        .bind(3, token_digest(issued.token))
        .bind(4, issued.share.created_at);
    write.step();
    return true;
  });
  if (!made) return std::nullopt;
  return issued;
}

bool SqliteStore::revoke_share(std::int64_t job_id, std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement revoke(
      db_, "UPDATE job_shares SET revoked_at = ? WHERE job_id = ? AND learner_id = ? AND revoked_at IS NULL");
  revoke.bind(1, now_seconds()).bind(2, job_id).bind(3, learner_id);
  revoke.step();
  return sqlite3_changes(db_) > 0;
}

std::optional<JobShare> SqliteStore::live_share(std::int64_t job_id, std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(
      db_, "SELECT created_at FROM job_shares WHERE job_id = ? AND learner_id = ? AND revoked_at IS NULL");
  query.bind(1, job_id).bind(2, learner_id);
  if (!query.step()) return std::nullopt;
  return JobShare{job_id, learner_id, query.real(0), std::nullopt};
}

std::optional<JobRecord> SqliteStore::shared_job(const std::string& token) {
  if (token.empty() || token.size() > store_internal::kMaxShareTokenLength) return std::nullopt;
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {} FROM jobs WHERE id = (SELECT s.job_id FROM job_shares AS s"
                                   " JOIN jobs AS j ON j.id = s.job_id AND j.learner_id = s.learner_id"
                                   " JOIN learners AS l ON l.id = s.learner_id WHERE s.token_sha256 = ?"
                                   " AND s.revoked_at IS NULL AND l.removed_at IS NULL AND j.state = 'done'"
                                   " AND j.rejudging_id IS NULL)",
                                   kJobColumns)
                           .c_str());
  query.bind(1, token_digest(token));
  if (!query.step()) return std::nullopt;
  return read_job(query);
}

}  // namespace cudojo

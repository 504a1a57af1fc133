// SqliteStore's links to one job (serve/store_shares.h): the table, made by schema step 8 (step 10
// adds who stopped a link, and the class's switch); making a link (the one before replaced) under the
// write lock, so the count of a learner's live links, the class's switch and the write see the same
// rows; stopping one, as its learner or as the class's staff; and the job a live link's token opens.
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
  issued.share = {job_id, learner_id, now_seconds(), std::nullopt, std::nullopt};
  std::lock_guard lock(mutex_);
  const bool made = in_transaction(db_, [&] {
    Statement job(
        db_,
        "SELECT state, (SELECT COUNT(*) FROM job_shares WHERE learner_id = ?2 AND revoked_at IS NULL"
        " AND job_id <> ?1), (SELECT c.sharing_open FROM learners AS l JOIN classes AS c"
        " ON c.id = l.class_id WHERE l.id = ?2)"
        " FROM jobs WHERE id = ?1 AND learner_id = ?2 AND rejudging_id IS NULL");
    job.bind(1, job_id).bind(2, learner_id);
    if (!job.step()) return false;
    store_internal::check_new_share(job.text(0), job.integer(1), max_live, job.integer(2) != 0);
    Statement write(
        db_,
        "INSERT INTO job_shares (job_id, learner_id, token_sha256, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (job_id) DO UPDATE SET learner_id = excluded.learner_id,"
        " token_sha256 = excluded.token_sha256, created_at = excluded.created_at, revoked_at = NULL,"
        " stopped_by = NULL");
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

std::optional<JobShare> SqliteStore::job_share(std::int64_t job_id, std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(
      db_, "SELECT created_at, revoked_at, stopped_by FROM job_shares WHERE job_id = ? AND learner_id = ?");
  query.bind(1, job_id).bind(2, learner_id);
  if (!query.step()) return std::nullopt;
  return JobShare{job_id, learner_id, query.real(0), query.optional_real(1), query.optional_text(2)};
}

std::vector<ClassShare> SqliteStore::class_shares(std::int64_t class_id, int limit) {
  std::lock_guard lock(mutex_);
  Statement query(
      db_,
      "SELECT s.job_id, s.learner_id, l.name, j.stage, j.verdict, s.created_at FROM job_shares AS s"
      " JOIN jobs AS j ON j.id = s.job_id AND j.learner_id = s.learner_id"
      " JOIN learners AS l ON l.id = s.learner_id WHERE l.class_id = ? AND s.revoked_at IS NULL"
      " AND l.removed_at IS NULL AND j.state = 'done' AND j.rejudging_id IS NULL"
      " ORDER BY s.created_at DESC, s.job_id DESC LIMIT ?");
  query.bind(1, class_id).bind(2, static_cast<std::int64_t>(limit));
  std::vector<ClassShare> shares;
  while (query.step()) {
    shares.push_back({query.integer(0), query.integer(1), query.text(2), query.text(3),
                      query.optional_text(4), query.real(5)});
  }
  return shares;
}

int SqliteStore::stop_class_shares(std::int64_t class_id, const std::string& staff_name) {
  Statement stop(db_,
                 "UPDATE job_shares SET revoked_at = ?, stopped_by = ? WHERE revoked_at IS NULL"
                 " AND learner_id IN (SELECT id FROM learners WHERE class_id = ?)");
  stop.bind(1, now_seconds()).bind(2, staff_name).bind(3, class_id);
  stop.step();
  return sqlite3_changes(db_);
}

bool SqliteStore::stop_class_share(std::int64_t class_id, std::int64_t job_id, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    Statement stop(
        db_,
        "UPDATE job_shares SET revoked_at = ?, stopped_by = ? WHERE job_id = ? AND revoked_at IS NULL"
        " AND learner_id IN (SELECT id FROM learners WHERE class_id = ?)");
    stop.bind(1, now_seconds()).bind(2, note.actor.name).bind(3, job_id).bind(4, class_id);
    stop.step();
    if (sqlite3_changes(db_) == 0) return false;
    insert_audit(note);
    return true;
  });
}

std::optional<JobRecord> SqliteStore::shared_job(const std::string& token) {
  if (token.empty() || token.size() > store_internal::kMaxShareTokenLength) return std::nullopt;
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {} FROM jobs WHERE id = (SELECT s.job_id FROM job_shares AS s"
                                   " JOIN jobs AS j ON j.id = s.job_id AND j.learner_id = s.learner_id"
                                   " JOIN learners AS l ON l.id = s.learner_id"
                                   " JOIN classes AS c ON c.id = l.class_id AND c.sharing_open <> 0"
                                   " WHERE s.token_sha256 = ?"
                                   " AND s.revoked_at IS NULL AND l.removed_at IS NULL AND j.state = 'done'"
                                   " AND j.rejudging_id IS NULL)",
                                   kJobColumns)
                           .c_str());
  query.bind(1, token_digest(token));
  if (!query.step()) return std::nullopt;
  return read_job(query);
}

}  // namespace cudojo

// SqliteStore's classes (serve/store_classes.h), second part: a class's learners (rosters, changes,
// tokens), its deadlines, each learner's drafts, and the grid's one query. Every change staff make is
// written in one transaction with its audit entry (SqliteStore::insert_audit, sqlite_classes.cc).
#include <fmt/format.h>
#include <sqlite3.h>

#include <limits>

#include "serve/sqlite_statement.h"
#include "serve/sqlite_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using sqlite_internal::in_transaction;
using sqlite_internal::Statement;
using store_internal::now_seconds;

namespace {

constexpr const char* kRosterColumns = "id, name, student_id, email, created_at, signed_in_at, removed_at";

RosterEntry read_roster_entry(const Statement& row) {
  return {row.integer(0), row.text(1),          row.optional_text(2), row.optional_text(3),
          row.real(4),    row.optional_real(5), row.optional_real(6)};
}

std::optional<std::string> not_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

}  // namespace

// ---- Rosters and tokens

std::vector<RosterEntry> SqliteStore::roster(std::int64_t class_id) {
  std::lock_guard lock(mutex_);
  Statement query(
      db_, fmt::format("SELECT {} FROM learners WHERE class_id = ? ORDER BY name", kRosterColumns).c_str());
  query.bind(1, class_id);
  std::vector<RosterEntry> entries;
  while (query.step()) entries.push_back(read_roster_entry(query));
  return entries;
}

std::optional<RosterEntry> SqliteStore::roster_entry(std::int64_t class_id, std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(
      db_, fmt::format("SELECT {} FROM learners WHERE class_id = ? AND id = ?", kRosterColumns).c_str());
  query.bind(1, class_id).bind(2, learner_id);
  if (!query.step()) return std::nullopt;
  return read_roster_entry(query);
}

RosterImportCounts SqliteStore::import_roster(std::int64_t class_id, const std::vector<RosterRow>& rows,
                                              std::int64_t max_class_learners, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    RosterImportCounts counts;
    for (const RosterRow& row : rows) {
      const std::string name = store_internal::checked_learner_name(row.name);
      Statement existing(db_,
                         "SELECT id, name, COALESCE(email, ''), removed_at IS NOT NULL FROM learners"
                         " WHERE class_id = ? AND student_id = ?");
      existing.bind(1, class_id).bind(2, row.student_id);
      const bool known = existing.step();
      if (known && existing.integer(3) != 0)
        throw store_internal::removed_student(row.student_id, existing.text(1));
      Statement clash(db_,
                      "SELECT 1 FROM learners WHERE class_id = ? AND name = ? AND removed_at IS NULL"
                      " AND student_id IS NOT ?");
      clash.bind(1, class_id).bind(2, name).bind(3, row.student_id);
      if (clash.step()) {
        throw StoreError(
            StoreErrorCode::kNameTaken,
            fmt::format("student {}: another learner of this class is named '{}'", row.student_id, name));
      }
      if (!known) {
        // A token nobody knows: the learner gets a real one from issue_tokens.
        Statement insert(db_,
                         "INSERT INTO learners (class_id, name, token_sha256, created_at, student_id, email,"
                         " origin) VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), 'roster')");
        insert.bind(1, class_id).bind(2, name).bind(3, token_digest(store_internal::random_token()));
        insert.bind(4, now_seconds()).bind(5, row.student_id).bind(6, row.email);
        insert.step();
        ++counts.created;
        continue;
      }
      if (existing.text(1) == name && existing.text(2) == row.email) {
        ++counts.unchanged;
        continue;
      }
      Statement update(db_, "UPDATE learners SET name = ?, email = NULLIF(?, '') WHERE id = ?");
      update.bind(1, name).bind(2, row.email).bind(3, existing.integer(0));
      update.step();
      ++counts.updated;
    }
    Statement size(db_, "SELECT COUNT(*) FROM learners WHERE class_id = ? AND removed_at IS NULL");
    size.bind(1, class_id);
    size.step();
    store_internal::check_class_size(size.integer(0), max_class_learners);
    AuditNote recorded = note;
    recorded.detail += fmt::format(" ({} created, {} updated, {} unchanged)", counts.created, counts.updated,
                                   counts.unchanged);
    insert_audit(recorded);
    return counts;
  });
}

std::optional<RosterEntry> SqliteStore::change_learner(std::int64_t class_id, std::int64_t learner_id,
                                                       const LearnerChange& change, const AuditNote& note) {
  const std::optional<std::string> name =
      change.name ? std::optional<std::string>(store_internal::checked_learner_name(*change.name))
                  : std::nullopt;
  {
    std::lock_guard lock(mutex_);
    const bool found = in_transaction(db_, [&] {
      Statement current(db_, "SELECT name, removed_at IS NULL FROM learners WHERE class_id = ? AND id = ?");
      current.bind(1, class_id).bind(2, learner_id);
      if (!current.step()) return false;
      // The name the learner will have, checked against the class's other active learners whenever
      // they will be active (renamed, or restored under a name someone took meanwhile).
      const std::string new_name = name.value_or(current.text(0));
      const bool active_after = change.removed ? !*change.removed : current.integer(1) != 0;
      Statement clash(
          db_,
          "SELECT (? AND removed_at IS NULL AND name = ?) FROM learners WHERE class_id = ? AND id != ?"
          " AND ((? AND removed_at IS NULL AND name = ?) OR student_id = ?)");
      const auto student_id = change.student_id ? not_empty(*change.student_id) : std::nullopt;
      clash.bind(1, std::int64_t{active_after}).bind(2, new_name).bind(3, class_id).bind(4, learner_id);
      clash.bind(5, std::int64_t{active_after}).bind(6, new_name).bind(7, student_id);
      if (clash.step()) throw store_internal::learner_clash(clash.integer(0) != 0, new_name, student_id);
      // A removed learner's token is replaced by one nobody knows, so it stops working at once; a
      // restored one counts as never signed in, so the next issue of tokens includes them.
      Statement update(
          db_,
          "UPDATE learners SET name = ?,"
          " student_id = CASE WHEN ? THEN NULLIF(?, '') ELSE student_id END,"
          " email = CASE WHEN ? THEN NULLIF(?, '') ELSE email END,"
          " removed_at = CASE WHEN ? IS NULL THEN removed_at WHEN ? THEN COALESCE(removed_at, ?)"
          "  ELSE NULL END,"
          " token_sha256 = CASE WHEN ? AND removed_at IS NULL THEN ? ELSE token_sha256 END,"
          " signed_in_at = CASE WHEN ? = 0 AND removed_at IS NOT NULL THEN NULL ELSE signed_in_at END"
          " WHERE class_id = ? AND id = ?");
      const std::optional<std::int64_t> removed =
          change.removed ? std::optional<std::int64_t>(*change.removed ? 1 : 0) : std::nullopt;
      update.bind(1, new_name);
      update.bind(2, std::int64_t{change.student_id.has_value()}).bind(3, change.student_id.value_or(""));
      update.bind(4, std::int64_t{change.email.has_value()}).bind(5, change.email.value_or(""));
      update.bind(6, removed).bind(7, removed).bind(8, now_seconds());
      update.bind(9, std::int64_t{change.removed.value_or(false)});
      update.bind(10, token_digest(store_internal::random_token())).bind(11, removed);
      update.bind(12, class_id).bind(13, learner_id);
      update.step();
      if (change.removed.value_or(false)) {
        // Their links stop for good: restoring the learner later must not reopen links they can no
        // longer stop (their token is one nobody knows until staff issue a new one). The member of
        // staff who removed them stopped the links, not the learner.
        Statement stop(db_,
                       "UPDATE job_shares SET revoked_at = ?, stopped_by = ? WHERE learner_id = ?"
                       " AND revoked_at IS NULL");
        stop.bind(1, now_seconds()).bind(2, note.actor.name).bind(3, learner_id);
        stop.step();
      }
      insert_audit(note);
      return true;
    });
    if (!found) return std::nullopt;
  }
  return roster_entry(class_id, learner_id);
}

std::optional<std::string> SqliteStore::reset_learner_token(std::int64_t class_id, std::int64_t learner_id,
                                                            const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&]() -> std::optional<std::string> {
    const std::string token = store_internal::random_token();
    // Not yet signed in with it: the first use of the new token is the learner's.
    Statement update(db_,
                     "UPDATE learners SET token_sha256 = ?, signed_in_at = NULL"
                     " WHERE class_id = ? AND id = ? AND removed_at IS NULL");
    update.bind(1, token_digest(token)).bind(2, class_id).bind(3, learner_id);
    update.step();
    if (sqlite3_changes(db_) == 0) return std::nullopt;
    insert_audit(note);
    return token;
  });
}

std::vector<IssuedToken> SqliteStore::issue_tokens(std::int64_t class_id, bool only_never_signed_in,
                                                   const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    std::vector<IssuedToken> issued;
    {
      Statement query(db_, fmt::format("SELECT {} FROM learners WHERE class_id = ? AND removed_at IS NULL"
                                       " AND (? = 0 OR signed_in_at IS NULL) ORDER BY name",
                                       kRosterColumns)
                               .c_str());
      query.bind(1, class_id).bind(2, std::int64_t{only_never_signed_in ? 1 : 0});
      while (query.step()) issued.push_back({read_roster_entry(query), store_internal::random_token()});
    }
    for (IssuedToken& entry : issued) {
      Statement update(db_, "UPDATE learners SET token_sha256 = ?, signed_in_at = NULL WHERE id = ?");
      update.bind(1, token_digest(entry.token)).bind(2, entry.learner.id);
      update.step();
      entry.learner.signed_in_at.reset();
    }
    AuditNote recorded = note;
    recorded.detail += fmt::format(" ({} token{})", issued.size(), issued.size() == 1 ? "" : "s");
    insert_audit(recorded);
    return issued;
  });
}

// ---- Deadlines

std::vector<Deadline> SqliteStore::deadlines(std::int64_t class_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT stage, due_at, hide_leaderboard FROM deadlines WHERE class_id = ? ORDER BY stage");
  query.bind(1, class_id);
  std::vector<Deadline> found;
  while (query.step()) found.push_back({query.text(0), query.real(1), query.integer(2) != 0});
  return found;
}

void SqliteStore::set_deadline(std::int64_t class_id, const Deadline& deadline, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  in_transaction(db_, [&] {
    Statement upsert(db_,
                     "INSERT INTO deadlines (class_id, stage, due_at, hide_leaderboard) VALUES (?, ?, ?, ?)"
                     " ON CONFLICT (class_id, stage) DO UPDATE SET due_at = excluded.due_at,"
                     " hide_leaderboard = excluded.hide_leaderboard");
    upsert.bind(1, class_id).bind(2, deadline.stage).bind(3, deadline.due_at);
    upsert.bind(4, std::int64_t{deadline.hide_leaderboard ? 1 : 0});
    upsert.step();
    insert_audit(note);
  });
}

bool SqliteStore::clear_deadline(std::int64_t class_id, const std::string& stage, const AuditNote& note) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    Statement remove(db_, "DELETE FROM deadlines WHERE class_id = ? AND stage = ?");
    remove.bind(1, class_id).bind(2, stage);
    remove.step();
    if (sqlite3_changes(db_) == 0) return false;
    insert_audit(note);
    return true;
  });
}

// ---- Drafts

std::vector<Draft> SqliteStore::drafts(std::int64_t learner_id, const std::optional<std::string>& stage) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT stage, language, source, updated_at FROM drafts WHERE learner_id = ?"
                  " AND (? IS NULL OR stage = ?) ORDER BY stage, language");
  query.bind(1, learner_id).bind(2, stage).bind(3, stage);
  std::vector<Draft> found;
  while (query.step()) found.push_back({query.text(0), query.text(1), query.text(2), query.real(3)});
  return found;
}

double SqliteStore::save_draft(std::int64_t learner_id, const Draft& draft) {
  std::lock_guard lock(mutex_);
  const double now = now_seconds();
  Statement upsert(
      db_,
      "INSERT INTO drafts (learner_id, stage, language, source, updated_at) VALUES (?, ?, ?, ?, ?)"
      " ON CONFLICT (learner_id, stage, language) DO UPDATE SET source = excluded.source,"
      " updated_at = excluded.updated_at");
  upsert.bind(1, learner_id).bind(2, draft.stage).bind(3, draft.language).bind(4, draft.source).bind(5, now);
  upsert.step();
  return now;
}

bool SqliteStore::delete_draft(std::int64_t learner_id, const std::string& stage,
                               const std::string& language) {
  std::lock_guard lock(mutex_);
  Statement remove(db_, "DELETE FROM drafts WHERE learner_id = ? AND stage = ? AND language = ?");
  remove.bind(1, learner_id).bind(2, stage).bind(3, language);
  remove.step();
  return sqlite3_changes(db_) > 0;
}

// ---- The grid

std::vector<GridCell> SqliteStore::class_grid(std::int64_t class_id) {
  std::lock_guard lock(mutex_);
  // The class's learners first (CROSS JOIN keeps that order), then each one's finished jobs read
  // from the covering index jobs_figures alone: never the table, whose rows carry the reports.
  Statement query(
      db_,
      "SELECT l.id, j.stage, COUNT(*), MAX(j.verdict = 'accepted'),"
      " MIN(CASE WHEN j.verdict = 'accepted' THEN COALESCE(j.baseline_ratio, j.time_ratio) END),"
      " MIN(CASE WHEN j.verdict = 'accepted' THEN j.created_at END), MAX(j.created_at),"
      " COALESCE(SUM(j.created_at > d.due_at), 0)"
      " FROM learners AS l CROSS JOIN jobs AS j ON j.learner_id = l.id"
      " LEFT JOIN deadlines AS d ON d.class_id = l.class_id AND d.stage = j.stage"
      " WHERE l.class_id = ? AND l.removed_at IS NULL AND j.state = 'done' AND j.rejudging_id IS NULL"
      " GROUP BY l.id, j.stage");
  query.bind(1, class_id);
  std::vector<GridCell> cells;
  while (query.step()) {
    GridCell cell;
    cell.learner_id = query.integer(0);
    cell.stage = query.text(1);
    cell.attempts = query.integer(2);
    cell.accepted = query.integer(3) != 0;
    cell.best_ratio = query.optional_real(4);
    cell.first_accepted_at = query.optional_real(5);
    cell.last_submitted_at = query.real(6);
    cell.late_jobs = query.integer(7);
    cells.push_back(std::move(cell));
  }
  return cells;
}

}  // namespace cudojo

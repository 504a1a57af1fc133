// PostgresStore's classes (serve/store_classes.h), with the answers SqliteStore gives, second part: a
// class's learners (rosters, changes, tokens), its deadlines, each learner's drafts, and the grid's
// one query. Every change staff make is written in one transaction with its audit entry.
#include <fmt/format.h>

#include <limits>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::insert_audit;
using postgres_internal::Params;
using postgres_internal::Rows;

namespace {

constexpr const char* kRosterColumns = "id, name, student_id, email, created_at, signed_in_at, removed_at";

RosterEntry read_roster_entry(const Rows& rows, int row) {
  return {rows.integer(row, 0),       rows.text(row, 1), rows.optional_text(row, 2),
          rows.optional_text(row, 3), rows.real(row, 4), rows.optional_real(row, 5),
          rows.optional_real(row, 6)};
}

}  // namespace

// ---- Rosters and tokens

std::vector<RosterEntry> PostgresStore::roster(std::int64_t class_id) {
  return with_session([&](Session& session) {
    Rows rows =
        session.run(fmt::format("SELECT {} FROM learners WHERE class_id = $1 ORDER BY name COLLATE \"C\"",
                                kRosterColumns),
                    Params().add(class_id));
    std::vector<RosterEntry> entries;
    for (int row = 0; row < rows.size(); ++row) entries.push_back(read_roster_entry(rows, row));
    return entries;
  });
}

std::optional<RosterEntry> PostgresStore::roster_entry(std::int64_t class_id, std::int64_t learner_id) {
  return with_session([&](Session& session) -> std::optional<RosterEntry> {
    Rows rows =
        session.run(fmt::format("SELECT {} FROM learners WHERE class_id = $1 AND id = $2", kRosterColumns),
                    Params().add(class_id).add(learner_id));
    if (rows.empty()) return std::nullopt;
    return read_roster_entry(rows, 0);
  });
}

RosterImportCounts PostgresStore::import_roster(std::int64_t class_id, const std::vector<RosterRow>& rows,
                                                std::int64_t max_class_learners, const AuditNote& note) {
  std::vector<std::string> names;
  for (const RosterRow& row : rows) names.push_back(store_internal::checked_learner_name(row.name));
  return with_session([&](Session& session) {
    return session.transaction([&] {
      // Changes to one class's learners wait for each other (imports, joins), so a count and the
      // writes after it are never overtaken.
      session.run("SELECT 1 FROM classes WHERE id = $1 FOR UPDATE", Params().add(class_id));
      RosterImportCounts counts;
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const RosterRow& row = rows[i];
        const std::string& name = names[i];
        Rows existing = session.run(
            "SELECT id, name, COALESCE(email, ''), removed_at IS NOT NULL FROM learners"
            " WHERE class_id = $1 AND student_id = $2",
            Params().add(class_id).add(row.student_id));
        if (!existing.empty() && existing.boolean(0, 3))
          throw store_internal::removed_student(row.student_id, existing.text(0, 1));
        Rows clash = session.run(
            "SELECT 1 FROM learners WHERE class_id = $1 AND name = $2 AND removed_at IS NULL"
            " AND student_id IS DISTINCT FROM $3",
            Params().add(class_id).add(name).add(row.student_id));
        if (!clash.empty()) {
          throw StoreError(
              StoreErrorCode::kNameTaken,
              fmt::format("student {}: another learner of this class is named '{}'", row.student_id, name));
        }
        if (existing.empty()) {
          // A token nobody knows: the learner gets a real one from issue_tokens.
          session.run(
              "INSERT INTO learners (class_id, name, token_sha256, created_at, student_id, email, origin)"
              " VALUES ($1, $2, $3, " CUDOJO_NOW ", $4, NULLIF($5, ''), 'roster')",
              Params()
                  .add(class_id)
                  .add(name)
                  .add(token_digest(store_internal::random_token()))
                  .add(row.student_id)
                  .add(row.email));
          ++counts.created;
          continue;
        }
        if (existing.text(0, 1) == name && existing.text(0, 2) == row.email) {
          ++counts.unchanged;
          continue;
        }
        session.run("UPDATE learners SET name = $1, email = NULLIF($2, '') WHERE id = $3",
                    Params().add(name).add(row.email).add(existing.integer(0, 0)));
        ++counts.updated;
      }
      store_internal::check_class_size(
          session
              .run("SELECT COUNT(*) FROM learners WHERE class_id = $1 AND removed_at IS NULL",
                   Params().add(class_id))
              .integer(0, 0),
          max_class_learners);
      AuditNote recorded = note;
      recorded.detail += fmt::format(" ({} created, {} updated, {} unchanged)", counts.created,
                                     counts.updated, counts.unchanged);
      insert_audit(session, recorded);
      return counts;
    });
  });
}

std::optional<RosterEntry> PostgresStore::change_learner(std::int64_t class_id, std::int64_t learner_id,
                                                         const LearnerChange& change, const AuditNote& note) {
  const std::optional<std::string> name =
      change.name ? std::optional<std::string>(store_internal::checked_learner_name(*change.name))
                  : std::nullopt;
  const std::optional<std::string> student_id =
      change.student_id && !change.student_id->empty() ? change.student_id : std::nullopt;
  return with_session([&](Session& session) -> std::optional<RosterEntry> {
    const bool found = session.transaction([&] {
      session.run("SELECT 1 FROM classes WHERE id = $1 FOR UPDATE", Params().add(class_id));
      Rows current =
          session.run("SELECT name, removed_at IS NULL FROM learners WHERE class_id = $1 AND id = $2",
                      Params().add(class_id).add(learner_id));
      if (current.empty()) return false;
      // The name the learner will have, checked against the class's other active learners whenever
      // they will be active (renamed, or restored under a name someone took meanwhile).
      const std::string new_name = name.value_or(current.text(0, 0));
      const bool active_after = change.removed ? !*change.removed : current.boolean(0, 1);
      Rows clash = session.run(
          "SELECT ($1 AND removed_at IS NULL AND name = $2) FROM learners WHERE class_id = $3 AND id <> $4"
          " AND (($1 AND removed_at IS NULL AND name = $2) OR student_id = $5)",
          Params().add(active_after).add(new_name).add(class_id).add(learner_id).add(student_id));
      if (!clash.empty()) throw store_internal::learner_clash(clash.boolean(0, 0), new_name, student_id);
      // A removed learner's token is replaced by one nobody knows, so it stops working at once; a
      // restored one counts as never signed in.
      session.run(
          "UPDATE learners SET name = $1,"
          " student_id = CASE WHEN $2 THEN NULLIF($3, '') ELSE student_id END,"
          " email = CASE WHEN $4 THEN NULLIF($5, '') ELSE email END,"
          " removed_at = CASE WHEN $6::boolean IS NULL THEN removed_at"
          "  WHEN $6 THEN COALESCE(removed_at, " CUDOJO_NOW
          ") ELSE NULL END,"
          " token_sha256 = CASE WHEN $6 AND removed_at IS NULL THEN $7 ELSE token_sha256 END,"
          " signed_in_at = CASE WHEN NOT $6 AND removed_at IS NOT NULL THEN NULL ELSE signed_in_at END"
          " WHERE class_id = $8 AND id = $9",
          Params()
              .add(new_name)
              .add(change.student_id.has_value())
              .add(change.student_id.value_or(""))
              .add(change.email.has_value())
              .add(change.email.value_or(""))
              .add(change.removed)
              .add(token_digest(store_internal::random_token()))
              .add(class_id)
              .add(learner_id));
      if (change.removed.value_or(false)) {
        // Their links stop for good, as in the SQLite store (sqlite_rosters.cc says why).
        session.run("UPDATE job_shares SET revoked_at = " CUDOJO_NOW
                    ", stopped_by = $2 WHERE learner_id = $1 AND revoked_at IS NULL",
                    Params().add(learner_id).add(note.actor.name));
      }
      insert_audit(session, note);
      return true;
    });
    if (!found) return std::nullopt;
    Rows rows = session.run(fmt::format("SELECT {} FROM learners WHERE id = $1", kRosterColumns),
                            Params().add(learner_id));
    return read_roster_entry(rows, 0);
  });
}

std::optional<std::string> PostgresStore::reset_learner_token(std::int64_t class_id, std::int64_t learner_id,
                                                              const AuditNote& note) {
  const std::string token = store_internal::random_token();
  return with_session([&](Session& session) {
    return session.transaction([&]() -> std::optional<std::string> {
      // Not yet signed in with it: the first use of the new token is the learner's.
      if (session
              .run("UPDATE learners SET token_sha256 = $1, signed_in_at = NULL"
                   " WHERE class_id = $2 AND id = $3 AND removed_at IS NULL",
                   Params().add(token_digest(token)).add(class_id).add(learner_id))
              .affected() == 0)
        return std::nullopt;
      insert_audit(session, note);
      return token;
    });
  });
}

std::vector<IssuedToken> PostgresStore::issue_tokens(std::int64_t class_id, bool only_never_signed_in,
                                                     const AuditNote& note) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      Rows rows = session.run(fmt::format("SELECT {} FROM learners WHERE class_id = $1 AND removed_at IS NULL"
                                          " AND (NOT $2 OR signed_in_at IS NULL) ORDER BY name COLLATE \"C\""
                                          " FOR UPDATE",
                                          kRosterColumns),
                              Params().add(class_id).add(only_never_signed_in));
      std::vector<IssuedToken> issued;
      for (int row = 0; row < rows.size(); ++row) {
        IssuedToken entry{read_roster_entry(rows, row), store_internal::random_token()};
        session.run("UPDATE learners SET token_sha256 = $1, signed_in_at = NULL WHERE id = $2",
                    Params().add(token_digest(entry.token)).add(entry.learner.id));
        entry.learner.signed_in_at.reset();
        issued.push_back(std::move(entry));
      }
      AuditNote recorded = note;
      recorded.detail += fmt::format(" ({} token{})", issued.size(), issued.size() == 1 ? "" : "s");
      insert_audit(session, recorded);
      return issued;
    });
  });
}

// ---- Deadlines

std::vector<Deadline> PostgresStore::deadlines(std::int64_t class_id) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT stage, due_at, hide_leaderboard FROM deadlines WHERE class_id = $1 ORDER BY stage COLLATE "
        "\"C\"",
        Params().add(class_id));
    std::vector<Deadline> found;
    for (int row = 0; row < rows.size(); ++row)
      found.push_back({rows.text(row, 0), rows.real(row, 1), rows.boolean(row, 2)});
    return found;
  });
}

void PostgresStore::set_deadline(std::int64_t class_id, const Deadline& deadline, const AuditNote& note) {
  with_session([&](Session& session) {
    session.transaction([&] {
      session.run(
          "INSERT INTO deadlines (class_id, stage, due_at, hide_leaderboard) VALUES ($1, $2, $3, $4)"
          " ON CONFLICT (class_id, stage) DO UPDATE SET due_at = excluded.due_at,"
          " hide_leaderboard = excluded.hide_leaderboard",
          Params().add(class_id).add(deadline.stage).add(deadline.due_at).add(deadline.hide_leaderboard));
      insert_audit(session, note);
    });
  });
}

bool PostgresStore::clear_deadline(std::int64_t class_id, const std::string& stage, const AuditNote& note) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      if (session
              .run("DELETE FROM deadlines WHERE class_id = $1 AND stage = $2",
                   Params().add(class_id).add(stage))
              .affected() == 0)
        return false;
      insert_audit(session, note);
      return true;
    });
  });
}

// ---- Drafts

std::vector<Draft> PostgresStore::drafts(std::int64_t learner_id, const std::optional<std::string>& stage) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT stage, language, source, updated_at FROM drafts WHERE learner_id = $1"
        " AND ($2::text IS NULL OR stage = $2) ORDER BY stage COLLATE \"C\", language COLLATE \"C\"",
        Params().add(learner_id).add(stage));
    std::vector<Draft> found;
    for (int row = 0; row < rows.size(); ++row)
      found.push_back({rows.text(row, 0), rows.text(row, 1), rows.text(row, 2), rows.real(row, 3)});
    return found;
  });
}

double PostgresStore::save_draft(std::int64_t learner_id, const Draft& draft) {
  return with_session([&](Session& session) {
    return session
        .run(
            "INSERT INTO drafts (learner_id, stage, language, source, updated_at)"
            " VALUES ($1, $2, $3, $4, " CUDOJO_NOW
            ") ON CONFLICT (learner_id, stage, language)"
            " DO UPDATE SET source = excluded.source, updated_at = excluded.updated_at RETURNING updated_at",
            Params().add(learner_id).add(draft.stage).add(draft.language).add(draft.source))
        .real(0, 0);
  });
}

bool PostgresStore::delete_draft(std::int64_t learner_id, const std::string& stage,
                                 const std::string& language) {
  return with_session([&](Session& session) {
    return session
               .run("DELETE FROM drafts WHERE learner_id = $1 AND stage = $2 AND language = $3",
                    Params().add(learner_id).add(stage).add(language))
               .affected() > 0;
  });
}

// ---- The grid

std::vector<GridCell> PostgresStore::class_grid(std::int64_t class_id) {
  return with_session([&](Session& session) {
    // One pass over the class's finished jobs, grouped by learner and stage.
    Rows rows = session.run(
        "SELECT j.learner_id, j.stage, COUNT(*), bool_or(j.verdict = 'accepted'),"
        " MIN(COALESCE(j.baseline_ratio, j.time_ratio)) FILTER (WHERE j.verdict = 'accepted'),"
        " MIN(j.created_at) FILTER (WHERE j.verdict = 'accepted'), MAX(j.created_at),"
        " COUNT(*) FILTER (WHERE j.created_at > d.due_at)"
        " FROM learners AS l JOIN jobs AS j ON j.learner_id = l.id"
        " LEFT JOIN deadlines AS d ON d.class_id = l.class_id AND d.stage = j.stage"
        " WHERE l.class_id = $1 AND l.removed_at IS NULL AND j.state = 'done' AND j.rejudging_id IS NULL"
        " GROUP BY j.learner_id, j.stage",
        Params().add(class_id));
    std::vector<GridCell> cells;
    for (int row = 0; row < rows.size(); ++row) {
      GridCell cell;
      cell.learner_id = rows.integer(row, 0);
      cell.stage = rows.text(row, 1);
      cell.attempts = rows.integer(row, 2);
      cell.accepted = rows.boolean(row, 3);
      cell.best_ratio = rows.optional_real(row, 4);
      cell.first_accepted_at = rows.optional_real(row, 5);
      cell.last_submitted_at = rows.real(row, 6);
      cell.late_jobs = rows.integer(row, 7);
      cells.push_back(std::move(cell));
    }
    return cells;
  });
}

}  // namespace cudojo

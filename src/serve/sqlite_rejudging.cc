// SqliteStore's rejudgings (serve/store_rejudging.h): reruns made from a filter, their results read
// beside the originals, applied or cancelled as a whole, each with its audit entry.
#include <fmt/format.h>
#include <sqlite3.h>

#include <array>
#include <limits>

#include "serve/sqlite_statement.h"
#include "serve/sqlite_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using sqlite_internal::in_transaction;
using sqlite_internal::parse_state;
using sqlite_internal::Statement;
using store_internal::now_seconds;

namespace {

constexpr const char* kRejudgingColumns =
    "r.id, r.class_id, r.actor_kind, r.actor_id, r.actor_name, r.created_at, r.filter, r.reason, r.state,"
    " r.ended_at, (SELECT COUNT(*) FROM jobs AS j WHERE j.rejudging_id = r.id),"
    " (SELECT COUNT(*) FROM jobs AS j WHERE j.rejudging_id = r.id AND j.state = 'done')";

Rejudging read_rejudging(const Statement& row) {
  Rejudging rejudging;
  rejudging.id = row.integer(0);
  rejudging.class_id = row.optional_integer(1);
  rejudging.created_by = {row.text(2), row.integer(3), row.text(4)};
  rejudging.created_at = row.real(5);
  rejudging.filter = row.text(6);
  rejudging.reason = row.text(7);
  rejudging.state = store_internal::parse_rejudging_state(row.text(8));
  rejudging.ended_at = row.optional_real(9);
  rejudging.jobs = row.integer(10);
  rejudging.judged = row.integer(11);
  return rejudging;
}

// The filter as SQL over `j` (the job) and `l` (its learner), its values bound from 1 in this order:
// class, stage, learner, verdict, since, until, not_version. An absent part binds NULL, which the
// condition reads as "any".
constexpr const char* kFilterCondition =
    "j.state = 'done' AND j.rejudging_id IS NULL AND l.removed_at IS NULL"
    " AND (?1 IS NULL OR l.class_id = ?1) AND (?2 IS NULL OR j.stage = ?2)"
    " AND (?3 IS NULL OR j.learner_id = ?3) AND (?4 IS NULL OR j.verdict = ?4)"
    " AND j.created_at >= ?5 AND j.created_at < ?6"
    " AND (?7 IS NULL OR j.stage_version IS NULL OR j.stage_version <> ?7)"
    // A job waiting in another rejudging is left to that one.
    " AND NOT EXISTS (SELECT 1 FROM jobs AS o JOIN rejudgings AS x ON x.id = o.rejudging_id"
    "  WHERE o.rejudges_job = j.id AND x.state = 'judging')";

void bind_filter(Statement& statement, const RejudgeFilter& filter) {
  statement.bind(1, filter.class_id).bind(2, filter.stage).bind(3, filter.learner_id).bind(4, filter.verdict);
  statement.bind(5, filter.since.value_or(-std::numeric_limits<double>::max()));
  statement.bind(6, filter.until.value_or(std::numeric_limits<double>::max()));
  statement.bind(7, filter.not_version);
}

}  // namespace

Rejudging SqliteStore::create_rejudging(const RejudgeFilter& filter, const std::string& filter_text,
                                        const std::string& reason, std::int64_t max_jobs,
                                        const AuditNote& note) {
  std::lock_guard lock(mutex_);
  const std::int64_t id = in_transaction(db_, [&] {
    Statement count(
        db_, fmt::format("SELECT COUNT(*) FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id WHERE {}",
                         kFilterCondition)
                 .c_str());
    bind_filter(count, filter);
    count.step();
    const std::int64_t matched = count.integer(0);
    store_internal::check_rejudging_size(matched, max_jobs);
    Statement insert(db_,
                     "INSERT INTO rejudgings (class_id, created_at, actor_kind, actor_id, actor_name, filter,"
                     " reason) VALUES (?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, filter.class_id).bind(2, now_seconds()).bind(3, note.actor.kind).bind(4, note.actor.id);
    insert.bind(5, note.actor.name).bind(6, filter_text).bind(7, reason);
    insert.step();
    const std::int64_t made = sqlite3_last_insert_rowid(db_);
    // ?8 is the new rejudging; the reruns are queued now, behind every learner's job.
    Statement reruns(db_,
                     fmt::format("INSERT INTO jobs (learner_id, stage, source, state, created_at, language,"
                                 " rejudging_id, rejudges_job, profile) SELECT j.learner_id, j.stage,"
                                 " j.source, 'queued', ?9, j.language, ?8, j.id, j.profile FROM jobs AS j"
                                 " JOIN learners AS l ON l.id = j.learner_id WHERE {} ORDER BY j.id",
                                 kFilterCondition)
                         .c_str());
    bind_filter(reruns, filter);
    reruns.bind(8, made).bind(9, now_seconds());
    reruns.step();
    AuditNote recorded = note;
    recorded.detail = fmt::format("{} ({} jobs)", note.detail, matched);
    insert_audit(recorded);
    return made;
  });
  Statement query(db_,
                  fmt::format("SELECT {} FROM rejudgings AS r WHERE r.id = ?", kRejudgingColumns).c_str());
  query.bind(1, id);
  query.step();
  return read_rejudging(query);
}

std::vector<Rejudging> SqliteStore::list_rejudgings(std::optional<std::int64_t> class_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {} FROM rejudgings AS r WHERE ?1 IS NULL OR r.class_id = ?1"
                                   " ORDER BY r.id DESC",
                                   kRejudgingColumns)
                           .c_str());
  query.bind(1, class_id);
  std::vector<Rejudging> list;
  while (query.step()) list.push_back(read_rejudging(query));
  return list;
}

std::optional<Rejudging> SqliteStore::find_rejudging(std::int64_t rejudging_id) {
  std::lock_guard lock(mutex_);
  return rejudging_by_id(rejudging_id);
}

std::vector<RejudgeItem> SqliteStore::rejudging_items(std::int64_t rejudging_id) {
  std::lock_guard lock(mutex_);
  // `o` is the learner's job, `r` its rerun. Before applying, `o` holds the result before; after,
  // the two were swapped (serve/store_rejudging.h), and `r` holds it.
  Statement query(db_,
                  "SELECT o.id, r.id, o.learner_id, l.name, l.class_id, o.stage, o.language, o.created_at,"
                  " r.state, x.state = 'applied',"
                  " o.verdict, COALESCE(o.baseline_ratio, o.time_ratio), o.stage_version,"
                  " r.verdict, COALESCE(r.baseline_ratio, r.time_ratio), r.stage_version"
                  " FROM jobs AS r JOIN rejudgings AS x ON x.id = r.rejudging_id"
                  " JOIN jobs AS o ON o.id = r.rejudges_job JOIN learners AS l ON l.id = o.learner_id"
                  " WHERE r.rejudging_id = ? ORDER BY l.name, o.id");
  query.bind(1, rejudging_id);
  std::vector<RejudgeItem> items;
  while (query.step()) {
    RejudgeItem item;
    item.job_id = query.integer(0);
    item.rerun_id = query.integer(1);
    item.learner_id = query.integer(2);
    item.learner_name = query.text(3);
    item.class_id = query.integer(4);
    item.stage = query.text(5);
    item.language = query.text(6);
    item.submitted_at = query.real(7);
    item.rerun_state = parse_state(query.text(8));
    const bool applied = query.integer(9) != 0;
    const int before = applied ? 13 : 10, after = applied ? 10 : 13;
    item.before_verdict = query.optional_text(before);
    item.before_ratio = query.optional_real(before + 1);
    item.before_version = query.optional_text(before + 2);
    if (item.rerun_state == JobState::kDone) {
      item.after_verdict = query.optional_text(after);
      item.after_ratio = query.optional_real(after + 1);
      item.after_version = query.optional_text(after + 2);
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::optional<Rejudging> SqliteStore::apply_rejudging(std::int64_t rejudging_id, const AuditNote& note) {
  return end_rejudging(rejudging_id, note, true);
}

std::optional<Rejudging> SqliteStore::cancel_rejudging(std::int64_t rejudging_id, const AuditNote& note) {
  return end_rejudging(rejudging_id, note, false);
}

std::optional<Rejudging> SqliteStore::end_rejudging(std::int64_t rejudging_id, const AuditNote& note,
                                                    bool apply) {
  std::lock_guard lock(mutex_);
  const bool found = in_transaction(db_, [&] {
    // Its state; reruns still to judge; reruns without a verdict on the kernel that would replace a
    // result with one; versions per stage.
    Statement state(db_,
                    "SELECT x.state,"
                    " (SELECT COUNT(*) FROM jobs WHERE rejudging_id = x.id AND state <> 'done'),"
                    " (SELECT COUNT(*) FROM jobs AS r JOIN jobs AS o ON o.id = r.rejudges_job"
                    "  WHERE r.rejudging_id = x.id AND r.state = 'done'"
                    "  AND r.verdict IN ('internal_error', 'no_device') AND o.verdict IS NOT r.verdict),"
                    " (SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(DISTINCT stage_version) AS n FROM jobs"
                    "  WHERE rejudging_id = x.id GROUP BY stage))"
                    " FROM rejudgings AS x WHERE x.id = ?");
    state.bind(1, rejudging_id);
    if (!state.step()) return false;
    store_internal::check_rejudging_open(rejudging_id, state.text(0), apply, state.integer(1),
                                         state.integer(2), state.integer(3));
    if (apply) {
      // Each pair swaps verdict and report; the triggers read the figures and the version again.
      std::vector<std::array<std::int64_t, 2>> pairs;
      {
        Statement read(db_, "SELECT id, rejudges_job FROM jobs WHERE rejudging_id = ?");
        read.bind(1, rejudging_id);
        while (read.step()) pairs.push_back({read.integer(0), read.integer(1)});
      }
      for (const auto& [rerun, original] : pairs) {
        Statement old(db_, "SELECT verdict, report FROM jobs WHERE id = ?");
        old.bind(1, original);
        old.step();
        const auto old_verdict = old.optional_text(0);
        const auto old_report = old.optional_text(1);
        Statement swap(db_,
                       "UPDATE jobs SET verdict = (SELECT verdict FROM jobs WHERE id = ?2),"
                       " report = (SELECT report FROM jobs WHERE id = ?2) WHERE id = ?1");
        swap.bind(1, original).bind(2, rerun);
        swap.step();
        Statement keep(db_, "UPDATE jobs SET verdict = ?2, report = ?3 WHERE id = ?1");
        keep.bind(1, rerun).bind(2, old_verdict).bind(3, old_report);
        keep.step();
        swap_ncu_reports(original, rerun);  // each report stays with the verdict it came with
      }
    } else {
      Statement drop(db_, "DELETE FROM jobs WHERE rejudging_id = ?");
      drop.bind(1, rejudging_id);
      drop.step();
    }
    Statement done(db_, "UPDATE rejudgings SET state = ?, ended_at = ? WHERE id = ?");
    done.bind(1, std::string(apply ? "applied" : "cancelled")).bind(2, now_seconds()).bind(3, rejudging_id);
    done.step();
    insert_audit(note);
    return true;
  });
  if (!found) return std::nullopt;
  return rejudging_by_id(rejudging_id);
}

std::optional<Rejudging> SqliteStore::rejudging_by_id(std::int64_t rejudging_id) {
  Statement query(db_,
                  fmt::format("SELECT {} FROM rejudgings AS r WHERE r.id = ?", kRejudgingColumns).c_str());
  query.bind(1, rejudging_id);
  if (!query.step()) return std::nullopt;
  return read_rejudging(query);
}

std::vector<StageVersionCount> SqliteStore::stage_versions(std::optional<std::int64_t> class_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT j.stage, j.stage_version, COUNT(*) FROM learners AS l CROSS JOIN jobs AS j"
                  " ON j.learner_id = l.id WHERE (?1 IS NULL OR l.class_id = ?1) AND l.removed_at IS NULL"
                  " AND j.state = 'done' AND j.rejudging_id IS NULL"
                  " GROUP BY j.stage, j.stage_version ORDER BY j.stage, j.stage_version");
  query.bind(1, class_id);
  std::vector<StageVersionCount> counts;
  while (query.step()) counts.push_back({query.text(0), query.optional_text(1), query.integer(2)});
  return counts;
}

}  // namespace cudojo

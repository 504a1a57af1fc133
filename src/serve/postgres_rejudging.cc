// PostgresStore's rejudgings (serve/store_rejudging.h), with the answers SqliteStore gives. Several
// nodes share the database: choosing jobs takes an advisory lock (two rejudgings never take the
// same job), and applying or cancelling locks the rejudging's row (one of them wins).
#include <fmt/format.h>

#include <limits>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::insert_audit;
using postgres_internal::kRejudgeLock;
using postgres_internal::Params;
using postgres_internal::parse_state;
using postgres_internal::Rows;

namespace {

constexpr const char* kRejudgingColumns =
    "r.id, r.class_id, r.actor_kind, r.actor_id, r.actor_name, r.created_at, r.filter, r.reason, r.state,"
    " r.ended_at, (SELECT COUNT(*) FROM jobs AS j WHERE j.rejudging_id = r.id),"
    " (SELECT COUNT(*) FROM jobs AS j WHERE j.rejudging_id = r.id AND j.state = 'done')";

Rejudging read_rejudging(const Rows& rows, int row) {
  Rejudging rejudging;
  rejudging.id = rows.integer(row, 0);
  rejudging.class_id = rows.optional_integer(row, 1);
  rejudging.created_by = {rows.text(row, 2), rows.integer(row, 3), rows.text(row, 4)};
  rejudging.created_at = rows.real(row, 5);
  rejudging.filter = rows.text(row, 6);
  rejudging.reason = rows.text(row, 7);
  rejudging.state = store_internal::parse_rejudging_state(rows.text(row, 8));
  rejudging.ended_at = rows.optional_real(row, 9);
  rejudging.jobs = rows.integer(row, 10);
  rejudging.judged = rows.integer(row, 11);
  return rejudging;
}

// As SqliteStore's: the filter over `j` and `l`, its values $1..$7 (class, stage, learner, verdict,
// since, until, not_version).
constexpr const char* kFilterCondition =
    "j.state = 'done' AND j.rejudging_id IS NULL AND l.removed_at IS NULL"
    " AND ($1::bigint IS NULL OR l.class_id = $1) AND ($2::text IS NULL OR j.stage = $2)"
    " AND ($3::bigint IS NULL OR j.learner_id = $3) AND ($4::text IS NULL OR j.verdict = $4)"
    " AND j.created_at >= $5::float8 AND j.created_at < $6::float8"
    " AND ($7::text IS NULL OR j.stage_version IS NULL OR j.stage_version <> $7)"
    " AND NOT EXISTS (SELECT 1 FROM jobs AS o JOIN rejudgings AS x ON x.id = o.rejudging_id"
    "  WHERE o.rejudges_job = j.id AND x.state = 'judging')";

Params filter_params(const RejudgeFilter& filter) {
  return Params()
      .add(filter.class_id)
      .add(filter.stage)
      .add(filter.learner_id)
      .add(filter.verdict)
      .add(filter.since.value_or(-std::numeric_limits<double>::max()))
      .add(filter.until.value_or(std::numeric_limits<double>::max()))
      .add(filter.not_version);
}

}  // namespace

Rejudging PostgresStore::create_rejudging(const RejudgeFilter& filter, const std::string& filter_text,
                                          const std::string& reason, std::int64_t max_jobs,
                                          const AuditNote& note) {
  return with_session([&](Session& session) {
    const std::int64_t id = session.transaction([&] {
      session.run(fmt::format("SELECT pg_advisory_xact_lock({})", kRejudgeLock));
      const std::int64_t matched =
          session
              .run(fmt::format("SELECT COUNT(*) FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
                               " WHERE {}",
                               kFilterCondition),
                   filter_params(filter))
              .integer(0, 0);
      store_internal::check_rejudging_size(matched, max_jobs);
      const std::int64_t made =
          session
              .run(
                  "INSERT INTO rejudgings (class_id, created_at, actor_kind, actor_id, actor_name, filter,"
                  " reason) VALUES ($1, " CUDOJO_NOW ", $2, $3, $4, $5, $6) RETURNING id",
                  Params()
                      .add(filter.class_id)
                      .add(note.actor.kind)
                      .add(note.actor.id)
                      .add(note.actor.name)
                      .add(filter_text)
                      .add(reason))
              .integer(0, 0);
      session.run(fmt::format("INSERT INTO jobs (learner_id, stage, source, state, created_at, language,"
                              " rejudging_id, rejudges_job, profile) SELECT j.learner_id, j.stage, j.source,"
                              " 'queued', " CUDOJO_NOW ", j.language, $8, j.id, j.profile FROM jobs AS j"
                              " JOIN learners AS l ON l.id = j.learner_id WHERE {} ORDER BY j.id",
                              kFilterCondition),
                  filter_params(filter).add(made));
      // Under READ COMMITTED the insert reads a newer snapshot than the count did: jobs finished in
      // between joined. What was made is what counts, checked before the transaction commits.
      const std::int64_t made_jobs =
          session.run("SELECT COUNT(*) FROM jobs WHERE rejudging_id = $1", Params().add(made)).integer(0, 0);
      store_internal::check_rejudging_size(made_jobs, max_jobs);
      session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      AuditNote recorded = note;
      recorded.detail = fmt::format("{} ({} jobs)", note.detail, made_jobs);
      insert_audit(session, recorded);
      return made;
    });
    return read_rejudging(
        session.run(fmt::format("SELECT {} FROM rejudgings AS r WHERE r.id = $1", kRejudgingColumns),
                    Params().add(id)),
        0);
  });
}

std::vector<Rejudging> PostgresStore::list_rejudgings(std::optional<std::int64_t> class_id) {
  return with_session([&](Session& session) {
    Rows rows = session.run(fmt::format("SELECT {} FROM rejudgings AS r WHERE $1::bigint IS NULL"
                                        " OR r.class_id = $1 ORDER BY r.id DESC",
                                        kRejudgingColumns),
                            Params().add(class_id));
    std::vector<Rejudging> list;
    for (int row = 0; row < rows.size(); ++row) list.push_back(read_rejudging(rows, row));
    return list;
  });
}

std::optional<Rejudging> PostgresStore::find_rejudging(std::int64_t rejudging_id) {
  return with_session([&](Session& session) { return rejudging_by_id(session, rejudging_id); });
}

std::vector<RejudgeItem> PostgresStore::rejudging_items(std::int64_t rejudging_id) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT o.id, r.id, o.learner_id, l.name, l.class_id, o.stage, o.language, o.created_at,"
        " r.state, x.state = 'applied',"
        " o.verdict, COALESCE(o.baseline_ratio, o.time_ratio), o.stage_version,"
        " r.verdict, COALESCE(r.baseline_ratio, r.time_ratio), r.stage_version"
        " FROM jobs AS r JOIN rejudgings AS x ON x.id = r.rejudging_id"
        " JOIN jobs AS o ON o.id = r.rejudges_job JOIN learners AS l ON l.id = o.learner_id"
        " WHERE r.rejudging_id = $1 ORDER BY l.name COLLATE \"C\", o.id",
        Params().add(rejudging_id));
    std::vector<RejudgeItem> items;
    for (int row = 0; row < rows.size(); ++row) {
      RejudgeItem item;
      item.job_id = rows.integer(row, 0);
      item.rerun_id = rows.integer(row, 1);
      item.learner_id = rows.integer(row, 2);
      item.learner_name = rows.text(row, 3);
      item.class_id = rows.integer(row, 4);
      item.stage = rows.text(row, 5);
      item.language = rows.text(row, 6);
      item.submitted_at = rows.real(row, 7);
      item.rerun_state = parse_state(rows.text(row, 8));
      const bool applied = rows.boolean(row, 9);
      const int before = applied ? 13 : 10, after = applied ? 10 : 13;
      item.before_verdict = rows.optional_text(row, before);
      item.before_ratio = rows.optional_real(row, before + 1);
      item.before_version = rows.optional_text(row, before + 2);
      if (item.rerun_state == JobState::kDone) {
        item.after_verdict = rows.optional_text(row, after);
        item.after_ratio = rows.optional_real(row, after + 1);
        item.after_version = rows.optional_text(row, after + 2);
      }
      items.push_back(std::move(item));
    }
    return items;
  });
}

std::optional<Rejudging> PostgresStore::apply_rejudging(std::int64_t rejudging_id, const AuditNote& note) {
  return end_rejudging(rejudging_id, note, true);
}

std::optional<Rejudging> PostgresStore::cancel_rejudging(std::int64_t rejudging_id, const AuditNote& note) {
  return end_rejudging(rejudging_id, note, false);
}

std::optional<Rejudging> PostgresStore::end_rejudging(std::int64_t rejudging_id, const AuditNote& note,
                                                      bool apply) {
  return with_session([&](Session& session) -> std::optional<Rejudging> {
    const bool found = session.transaction([&] {
      // The row lock makes one of two concurrent ends (from any nodes) wait for the other.
      // Its state; reruns still to judge; reruns without a verdict on the kernel that would replace a
      // result with one; versions per stage.
      Rows state = session.run(
          "SELECT state,"
          " (SELECT COUNT(*) FROM jobs WHERE rejudging_id = $1 AND state <> 'done'),"
          " (SELECT COUNT(*) FROM jobs AS r JOIN jobs AS o ON o.id = r.rejudges_job"
          "  WHERE r.rejudging_id = $1 AND r.state = 'done'"
          "  AND r.verdict IN ('internal_error', 'no_device') AND o.verdict IS DISTINCT FROM r.verdict),"
          " (SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(DISTINCT stage_version) AS n FROM jobs"
          "  WHERE rejudging_id = $1 GROUP BY stage) AS per_stage)"
          " FROM rejudgings WHERE id = $1 FOR UPDATE",
          Params().add(rejudging_id));
      if (state.empty()) return false;
      store_internal::check_rejudging_open(rejudging_id, state.text(0, 0), apply, state.integer(0, 1),
                                           state.integer(0, 2), state.integer(0, 3));
      if (apply) {
        // Both updates read the pairs from the statement's one snapshot: each side gets the other's
        // result as it was before the statement. The triggers read figures and version again.
        session.run(
            "WITH pairs AS (SELECT r.id AS rerun, o.id AS original, o.verdict AS old_verdict,"
            "  o.report AS old_report, r.verdict AS new_verdict, r.report AS new_report"
            "  FROM jobs AS r JOIN jobs AS o ON o.id = r.rejudges_job WHERE r.rejudging_id = $1),"
            " originals AS (UPDATE jobs SET verdict = p.new_verdict, report = p.new_report FROM pairs AS p"
            "  WHERE jobs.id = p.original RETURNING 1)"
            " UPDATE jobs SET verdict = p.old_verdict, report = p.old_report FROM pairs AS p"
            " WHERE jobs.id = p.rerun",
            Params().add(rejudging_id));
        // Each Nsight Compute report stays with the verdict it came with: per pair that has one, as
        // job_id is unique row by row, the original's steps aside (NULL, held by its id) while the
        // rerun's takes its place.
        Rows profiled = session.run(
            "SELECT r.id, r.rejudges_job, (SELECT n.id FROM ncu_reports AS n WHERE n.job_id = r.rejudges_job)"
            " FROM jobs AS r WHERE r.rejudging_id = $1 AND EXISTS (SELECT 1 FROM ncu_reports AS n"
            " WHERE n.job_id IN (r.id, r.rejudges_job))",
            Params().add(rejudging_id));
        for (int row = 0; row < profiled.size(); ++row) {
          const auto aside = profiled.optional_integer(row, 2);
          session.run("UPDATE ncu_reports SET job_id = NULL WHERE id = $1", Params().add(aside));
          session.run("UPDATE ncu_reports SET job_id = $1 WHERE job_id = $2",
                      Params().add(profiled.integer(row, 1)).add(profiled.integer(row, 0)));
          session.run("UPDATE ncu_reports SET job_id = $1 WHERE id = $2",
                      Params().add(profiled.integer(row, 0)).add(aside));
        }
      } else {
        session.run("DELETE FROM jobs WHERE rejudging_id = $1", Params().add(rejudging_id));
      }
      session.run("UPDATE rejudgings SET state = $2, ended_at = " CUDOJO_NOW " WHERE id = $1",
                  Params().add(rejudging_id).add(std::string(apply ? "applied" : "cancelled")));
      insert_audit(session, note);
      return true;
    });
    if (!found) return std::nullopt;
    return rejudging_by_id(session, rejudging_id);
  });
}

std::optional<Rejudging> PostgresStore::rejudging_by_id(Session& session, std::int64_t rejudging_id) {
  Rows rows = session.run(fmt::format("SELECT {} FROM rejudgings AS r WHERE r.id = $1", kRejudgingColumns),
                          Params().add(rejudging_id));
  if (rows.empty()) return std::nullopt;
  return read_rejudging(rows, 0);
}

std::vector<StageVersionCount> PostgresStore::stage_versions(std::optional<std::int64_t> class_id) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT j.stage, j.stage_version, COUNT(*) FROM learners AS l JOIN jobs AS j ON j.learner_id = l.id"
        " WHERE ($1::bigint IS NULL OR l.class_id = $1) AND l.removed_at IS NULL AND j.state = 'done'"
        " AND j.rejudging_id IS NULL GROUP BY j.stage, j.stage_version"
        " ORDER BY j.stage COLLATE \"C\", j.stage_version COLLATE \"C\"",
        Params().add(class_id));
    std::vector<StageVersionCount> counts;
    for (int row = 0; row < rows.size(); ++row) {
      counts.push_back({rows.text(row, 0), rows.optional_text(row, 1), rows.integer(row, 2)});
    }
    return counts;
  });
}

}  // namespace cudojo

// PostgresStore's queries over a learner's jobs and their class's finished ones: history, progress and
// leaderboards, over the gate's figures kept in each finished job's columns, with the answers
// SqliteStore gives.
#include <fmt/format.h>

#include <limits>

#include "serve/postgres_session.h"
#include "serve/postgres_store.h"

namespace cudojo {

using postgres_internal::Params;
using postgres_internal::parse_state;
using postgres_internal::Rows;

namespace {

// The ratio the gate judged by: the baseline's when the stage has one, else the reference's (both
// read out of the report when the job finished).
constexpr const char* kGateRatio = "COALESCE(baseline_ratio, time_ratio)";

}  // namespace

std::vector<JobSummary> PostgresStore::history(std::int64_t learner_id,
                                               const std::optional<std::string>& stage, int limit,
                                               std::optional<std::int64_t> before) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT id, stage, language, state, verdict, time_ratio, baseline_ratio, created_at, finished_at"
        " FROM jobs WHERE learner_id = $1 AND ($2::text IS NULL OR stage = $2) AND id < $3"
        " AND rejudging_id IS NULL"
        " ORDER BY id DESC LIMIT $4",
        Params()
            .add(learner_id)
            .add(stage)
            .add(before.value_or(std::numeric_limits<std::int64_t>::max()))
            .add(std::int64_t{limit}));
    std::vector<JobSummary> jobs;
    for (int row = 0; row < rows.size(); ++row) {
      JobSummary job;
      job.id = rows.integer(row, 0);
      job.stage = rows.text(row, 1);
      job.language = rows.text(row, 2);
      job.state = parse_state(rows.text(row, 3));
      job.verdict = rows.optional_text(row, 4);
      job.time_ratio = rows.optional_real(row, 5);
      job.baseline_ratio = rows.optional_real(row, 6);
      job.created_at = rows.real(row, 7);
      job.finished_at = rows.optional_real(row, 8);
      jobs.push_back(std::move(job));
    }
    return jobs;
  });
}

std::vector<StageProgress> PostgresStore::progress(std::int64_t learner_id) {
  return with_session([&](Session& session) {
    // As SqliteStore::progress: finished jobs (the judge's own failures left out) with their numbers read
    // once; each stage's accepted jobs ranked, the first being its best. Stage ids sort bytewise ("C"), as
    // SQLite does.
    Rows rows = session.run(
        fmt::format("WITH finished AS (SELECT id, stage, verdict, {} AS ratio, time_ms AS ms FROM jobs"
                    "  WHERE learner_id = $1 AND state = 'done' AND rejudging_id IS NULL"
                    "  AND verdict NOT IN ('no_device', 'internal_error')),"
                    " best AS (SELECT stage, ratio, ms, ROW_NUMBER() OVER (PARTITION BY stage"
                    "  ORDER BY ratio IS NULL, ratio, ms IS NULL, ms, id) AS place"
                    "  FROM finished WHERE verdict = 'accepted')"
                    " SELECT f.stage, COUNT(*), bool_or(f.verdict = 'accepted'), b.ratio, b.ms, MAX(f.id)"
                    " FROM finished AS f LEFT JOIN best AS b ON b.stage = f.stage AND b.place = 1"
                    " GROUP BY f.stage, b.ratio, b.ms ORDER BY f.stage COLLATE \"C\"",
                    kGateRatio),
        Params().add(learner_id));
    std::vector<StageProgress> stages;
    for (int row = 0; row < rows.size(); ++row) {
      StageProgress stage;
      stage.stage = rows.text(row, 0);
      stage.attempts = rows.integer(row, 1);
      stage.accepted = rows.boolean(row, 2);
      stage.best_time_ratio = rows.optional_real(row, 3);
      stage.best_time_ms = rows.optional_real(row, 4);
      stage.last_job = rows.integer(row, 5);
      stages.push_back(std::move(stage));
    }
    return stages;
  });
}

std::vector<LeaderboardEntry> PostgresStore::leaderboard(std::int64_t class_id, const std::string& stage,
                                                         int limit) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        fmt::format("WITH accepted AS (SELECT j.id, j.learner_id, j.language, j.finished_at,"
                    "  {} AS ratio, j.time_ms AS ms FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
                    "  WHERE j.stage = $1 AND j.state = 'done' AND j.verdict = 'accepted' AND l.leaderboard"
                    "  AND l.class_id = $3 AND l.removed_at IS NULL AND j.rejudging_id IS NULL),"
                    " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY learner_id ORDER BY ratio, id)"
                    "  AS place FROM accepted WHERE ratio IS NOT NULL)"
                    " SELECT l.name, r.ratio, r.ms, r.language, COALESCE(r.finished_at, 0), l.id,"
                    // A ranked job's ratio was read from its report, so the report is JSON.
                    "  (SELECT report::jsonb #>> '{{gpu,name}}' FROM jobs WHERE id = r.id)"
                    " FROM ranked AS r JOIN learners AS l ON l.id = r.learner_id"
                    " WHERE r.place = 1 ORDER BY r.ratio, r.id LIMIT $2",
                    "COALESCE(j.baseline_ratio, j.time_ratio)"),
        Params().add(stage).add(std::int64_t{limit}).add(class_id));
    std::vector<LeaderboardEntry> entries;
    for (int row = 0; row < rows.size(); ++row) {
      entries.push_back({rows.text(row, 0), rows.real(row, 1), rows.optional_real(row, 2), rows.text(row, 3),
                         rows.real(row, 4), rows.integer(row, 5), rows.optional_text(row, 6)});
    }
    return entries;
  });
}

}  // namespace cudojo

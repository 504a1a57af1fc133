// SqliteStore's queries over a learner's jobs and their class's finished ones: history, progress and
// leaderboards, over the gate's figures kept in each finished job's columns.
#include <fmt/format.h>
#include <sqlite3.h>

#include <limits>

#include "serve/sqlite_statement.h"
#include "serve/sqlite_store.h"

namespace cudojo {

using sqlite_internal::parse_state;
using sqlite_internal::Statement;

// The ratio the gate judged by: the baseline's when the stage has one, else the reference's (both
// read out of the report when the job finished).
constexpr const char* kGateRatio = "COALESCE(baseline_ratio, time_ratio)";

std::vector<JobSummary> SqliteStore::history(std::int64_t learner_id, const std::optional<std::string>& stage,
                                             int limit, std::optional<std::int64_t> before) {
  std::lock_guard lock(mutex_);
  // Absent filters bind values that match every row: one statement, one plan.
  Statement query(
      db_,
      "SELECT id, stage, language, state, verdict, time_ratio, baseline_ratio, created_at, finished_at"
      " FROM jobs WHERE learner_id = ? AND (? IS NULL OR stage = ?) AND id < ? AND rejudging_id IS NULL"
      " ORDER BY id DESC LIMIT ?");
  query.bind(1, learner_id);
  if (stage) query.bind(2, *stage).bind(3, *stage);
  query.bind(4, before.value_or(std::numeric_limits<std::int64_t>::max())).bind(5, std::int64_t{limit});
  std::vector<JobSummary> jobs;
  while (query.step()) {
    JobSummary job;
    job.id = query.integer(0);
    job.stage = query.text(1);
    job.language = query.text(2);
    job.state = parse_state(query.text(3));
    job.verdict = query.optional_text(4);
    job.time_ratio = query.optional_real(5);
    job.baseline_ratio = query.optional_real(6);
    job.created_at = query.real(7);
    job.finished_at = query.optional_real(8);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<StageProgress> SqliteStore::progress(std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  // finished: the learner's done jobs with the numbers read once (a job the judge could not judge,
  // no_device or internal_error, is no attempt of theirs); best: each stage's accepted jobs,
  // lowest gate ratio first (untimed ones last), of which the first is the stage's best.
  Statement query(
      db_, fmt::format("WITH finished AS (SELECT id, stage, verdict, {} AS ratio, time_ms AS ms FROM jobs"
                       "  WHERE learner_id = ? AND state = 'done' AND rejudging_id IS NULL"
                       "  AND verdict NOT IN ('no_device', 'internal_error')),"
                       " best AS (SELECT stage, ratio, ms, ROW_NUMBER() OVER (PARTITION BY stage"
                       "  ORDER BY ratio IS NULL, ratio, ms IS NULL, ms, id) AS place"
                       "  FROM finished WHERE verdict = 'accepted')"
                       " SELECT f.stage, COUNT(*), MAX(f.verdict = 'accepted'), b.ratio, b.ms, MAX(f.id)"
                       " FROM finished AS f LEFT JOIN best AS b ON b.stage = f.stage AND b.place = 1"
                       " GROUP BY f.stage ORDER BY f.stage",
                       kGateRatio)
               .c_str());
  query.bind(1, learner_id);
  std::vector<StageProgress> stages;
  while (query.step()) {
    StageProgress stage;
    stage.stage = query.text(0);
    stage.attempts = query.integer(1);
    stage.accepted = query.integer(2) != 0;
    stage.best_time_ratio = query.optional_real(3);
    stage.best_time_ms = query.optional_real(4);
    stage.last_job = query.integer(5);
    stages.push_back(std::move(stage));
  }
  return stages;
}

std::vector<LeaderboardEntry> SqliteStore::leaderboard(std::int64_t class_id, const std::string& stage,
                                                       int limit) {
  std::lock_guard lock(mutex_);
  // accepted: timed accepted jobs of the class's opted-in learners; ranked: each learner's, best first.
  Statement query(
      db_,
      fmt::format(
          "WITH accepted AS (SELECT j.id, j.learner_id, j.language, j.finished_at,"
          "  {} AS ratio, j.time_ms AS ms FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
          "  WHERE j.stage = ? AND j.state = 'done' AND j.verdict = 'accepted' AND l.leaderboard = 1"
          "  AND l.class_id = ? AND l.removed_at IS NULL AND j.rejudging_id IS NULL),"
          " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY learner_id ORDER BY ratio, id)"
          "  AS place FROM accepted WHERE ratio IS NOT NULL)"
          " SELECT l.name, r.ratio, r.ms, r.language, COALESCE(r.finished_at, 0), l.id,"
          "  (SELECT json_extract(report, '$.gpu.name') FROM jobs WHERE id = r.id AND json_valid(report))"
          " FROM ranked AS r JOIN learners AS l ON l.id = r.learner_id"
          " WHERE r.place = 1 ORDER BY r.ratio, r.id LIMIT ?",
          kGateRatio)
          .c_str());
  query.bind(1, stage).bind(2, class_id).bind(3, std::int64_t{limit});
  std::vector<LeaderboardEntry> entries;
  while (query.step()) {
    entries.push_back({query.text(0), query.real(1), query.optional_real(2), query.text(3), query.real(4),
                       query.integer(5), query.optional_text(6)});
  }
  return entries;
}

}  // namespace cudojo

#include "serve/sqlite_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include "serve/store_internal.h"

namespace cudojo {

namespace {

using store_internal::now_seconds;

// RAII prepared statement with typed binding and column access.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr) != SQLITE_OK) {
      throw StoreError(StoreErrorCode::kInternal,
                       fmt::format("SQL prepare failed: {} ({})", sqlite3_errmsg(db), sql));
    }
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(statement_, index, value);
    return *this;
  }
  Statement& bind(int index, double value) {
    sqlite3_bind_double(statement_, index, value);
    return *this;
  }
  Statement& bind(int index, const std::string& value) {
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // true while a row is available.
  bool step() {
    const int status = sqlite3_step(statement_);
    if (status == SQLITE_ROW) return true;
    if (status == SQLITE_DONE) return false;
    throw StoreError(StoreErrorCode::kInternal, fmt::format("SQL step failed: {}", sqlite3_errmsg(db_)));
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(statement_, column); }
  double real(int column) const { return sqlite3_column_double(statement_, column); }
  bool is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))) : "";
  }
  std::optional<std::string> optional_text(int column) const {
    return is_null(column) ? std::nullopt : std::optional<std::string>(text(column));
  }
  std::optional<double> optional_real(int column) const {
    return is_null(column) ? std::nullopt : std::optional<double>(real(column));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

// The columns every job query selects, in this order.
constexpr const char* kJobColumns =
    "id, learner_id, stage, source, state, phase, attempts, verdict, report, created_at, started_at, "
    "finished_at, language, holder, lease_until";

JobState parse_state(const std::string& text) {
  if (text == "running") return JobState::kRunning;
  if (text == "done") return JobState::kDone;
  return JobState::kQueued;
}

JobRecord read_job(const Statement& row) {
  JobRecord job;
  job.id = row.integer(0);
  job.learner_id = row.integer(1);
  job.stage = row.text(2);
  job.source = row.text(3);
  job.state = parse_state(row.text(4));
  job.phase = row.text(5);
  job.attempts = static_cast<int>(row.integer(6));
  job.verdict = row.optional_text(7);
  job.report_json = row.optional_text(8);
  job.created_at = row.real(9);
  job.started_at = row.optional_real(10);
  job.finished_at = row.optional_real(11);
  job.language = row.text(12);
  job.holder = row.optional_text(13);
  job.lease_until = row.optional_real(14);
  return job;
}

}  // namespace

SqliteStore::SqliteStore(const std::filesystem::path& file, int busy_timeout_ms) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  if (sqlite3_open(file.c_str(), &db_) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw StoreError(StoreErrorCode::kInternal, fmt::format("cannot open {}: {}", file.string(), message));
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  execute("PRAGMA journal_mode=WAL");
  execute("PRAGMA synchronous=FULL");  // a job acknowledged to a client survives power loss
  execute("PRAGMA foreign_keys=ON");
  execute(
      "CREATE TABLE IF NOT EXISTS learners ("
      " id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL UNIQUE,"
      " created_at REAL NOT NULL)");
  execute(
      "CREATE TABLE IF NOT EXISTS jobs ("
      " id INTEGER PRIMARY KEY, learner_id INTEGER NOT NULL REFERENCES learners(id),"
      " stage TEXT NOT NULL, source TEXT NOT NULL,"
      " state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),"
      " phase TEXT NOT NULL DEFAULT 'queued', attempts INTEGER NOT NULL DEFAULT 0,"
      " verdict TEXT, report TEXT, created_at REAL NOT NULL, started_at REAL, finished_at REAL)");
  migrate();
  execute("CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state, id)");
  execute("CREATE INDEX IF NOT EXISTS jobs_by_learner ON jobs(learner_id, stage, id)");
  // Checked once at start: a server must not take work on a database it cannot trust.
  {
    Statement check(db_, "PRAGMA quick_check");
    if (!check.step() || check.text(0) != "ok") {
      throw StoreError(StoreErrorCode::kInternal,
                       fmt::format("{} failed its integrity check; restore it from a backup", file.string()));
    }
  }
  file_ = file;
  struct stat info {};
  if (stat(file.c_str(), &info) == 0) inode_ = info.st_ino;
}

std::optional<std::string> SqliteStore::problem() {
  struct stat info {};
  if (stat(file_.c_str(), &info) != 0) return fmt::format("the database file {} is gone", file_.string());
  if (info.st_ino != inode_) return fmt::format("the database file {} was replaced", file_.string());
  std::lock_guard lock(mutex_);
  try {
    Statement query(db_, "SELECT COUNT(*) FROM learners");
    query.step();
  } catch (const StoreError& error) {
    return fmt::format("the database does not answer: {}", error.what());
  }
  return std::nullopt;
}

SqliteStore::~SqliteStore() { sqlite3_close(db_); }

// The schema's versions (PRAGMA user_version): 0, the first; 1 adds jobs.language (Python and Rust
// submissions), every older job being CUDA C++; 2 adds learners.leaderboard (opted in to the
// leaderboards), every older learner being opted out; 3 adds leases (jobs.holder, lease_until),
// learners.last_served_at (the round robin's order, kept as a column rather than computed from every
// job at each claim) and the nodes table; 4 adds jobs.client_key (a submission's Idempotency-Key,
// unique per learner). Each step runs once, in one transaction.
void SqliteStore::migrate() {
  constexpr std::int64_t kCurrentVersion = 4;
  Statement version_query(db_, "PRAGMA user_version");
  version_query.step();
  const std::int64_t version = version_query.integer(0);
  if (version >= kCurrentVersion) return;
  // Whether `table` already has `column` (a database made by this version's CREATE TABLE lacks it,
  // but one half-migrated by hand might not).
  auto has_column = [this](const char* table, const std::string& column) {
    Statement columns(db_, fmt::format("PRAGMA table_info({})", table).c_str());
    bool found = false;
    while (columns.step()) found = found || columns.text(1) == column;
    return found;
  };
  auto add_column = [&](const char* table, const char* column, const char* definition) {
    if (!has_column(table, column))
      execute(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", table, column, definition).c_str());
  };
  execute("BEGIN IMMEDIATE");
  try {
    add_column("jobs", "language", "TEXT NOT NULL DEFAULT 'cuda'");
    add_column("learners", "leaderboard", "INTEGER NOT NULL DEFAULT 0");
    add_column("jobs", "holder", "TEXT");
    add_column("jobs", "lease_until", "REAL");
    add_column("learners", "last_served_at", "REAL");
    add_column("jobs", "client_key", "TEXT");
    execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS jobs_by_client_key ON jobs(learner_id, client_key)"
        " WHERE client_key IS NOT NULL");
    // Served most recently = the latest start among a learner's jobs, so the order carries over.
    if (version < 3) {
      execute(
          "UPDATE learners SET last_served_at = (SELECT MAX(started_at) FROM jobs"
          " WHERE jobs.learner_id = learners.id)");
    }
    execute(
        "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, host TEXT NOT NULL, gpu TEXT NOT NULL,"
        " workers INTEGER NOT NULL, http INTEGER NOT NULL, started_at REAL NOT NULL, last_seen REAL NOT "
        "NULL)");
    execute(fmt::format("PRAGMA user_version = {}", kCurrentVersion).c_str());
    execute("COMMIT");
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

void SqliteStore::execute(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw StoreError(StoreErrorCode::kInternal, fmt::format("SQL failed: {} ({})", message, sql));
  }
}

IssuedLearner SqliteStore::create_learner(const std::string& requested) {
  const std::string name = store_internal::checked_learner_name(requested);
  std::lock_guard lock(mutex_);
  {
    Statement taken(db_, "SELECT 1 FROM learners WHERE name = ?");
    taken.bind(1, name);
    if (taken.step())
      throw StoreError(StoreErrorCode::kNameTaken, fmt::format("the name '{}' is taken", name));
  }
  IssuedLearner issued;
  issued.token = store_internal::random_token();
  Statement insert(db_, "INSERT INTO learners (name, token_sha256, created_at) VALUES (?, ?, ?)");
  insert.bind(1, name).bind(2, token_digest(issued.token)).bind(3, now_seconds());
  insert.step();
  issued.learner = {sqlite3_last_insert_rowid(db_), name};
  return issued;
}

std::optional<Learner> SqliteStore::find_learner_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT id, name, leaderboard FROM learners WHERE token_sha256 = ?");
  query.bind(1, token_digest(token));
  if (!query.step()) return std::nullopt;
  return Learner{query.integer(0), query.text(1), query.integer(2) != 0};
}

std::optional<Learner> SqliteStore::set_leaderboard(std::int64_t learner_id, bool leaderboard) {
  std::lock_guard lock(mutex_);
  {
    Statement update(db_, "UPDATE learners SET leaderboard = ? WHERE id = ?");
    update.bind(1, std::int64_t{leaderboard ? 1 : 0}).bind(2, learner_id);
    update.step();
  }
  Statement query(db_, "SELECT id, name, leaderboard FROM learners WHERE id = ?");
  query.bind(1, learner_id);
  if (!query.step()) return std::nullopt;
  return Learner{query.integer(0), query.text(1), query.integer(2) != 0};
}

Enqueued SqliteStore::submit(const Submission& submission, const QueueLimits& limits) {
  std::lock_guard lock(mutex_);
  // BEGIN IMMEDIATE takes the write lock first, so neither the key nor the counts below can change
  // before the insert, also when another process shares the file.
  execute("BEGIN IMMEDIATE");
  try {
    if (!submission.client_key.empty()) {
      Statement seen(db_,
                     "SELECT id, stage, source, language FROM jobs WHERE learner_id = ? AND client_key = ?");
      seen.bind(1, submission.learner_id).bind(2, submission.client_key);
      if (seen.step()) {
        const bool same = seen.text(1) == submission.stage && seen.text(2) == submission.source &&
                          seen.text(3) == submission.language;
        const std::int64_t id = seen.integer(0);
        if (!same) {
          throw StoreError(
              StoreErrorCode::kKeyReused,
              fmt::format("this Idempotency-Key was used for job {}, a different submission", id));
        }
        execute("COMMIT");
        return {id, true};
      }
    }
    Statement counts(db_,
                     "SELECT COUNT(*), COALESCE(SUM(learner_id = ?), 0) FROM jobs WHERE state != 'done'");
    counts.bind(1, submission.learner_id);
    counts.step();
    if (counts.integer(0) >= limits.max_queue_length) {
      throw StoreError(StoreErrorCode::kQueueFull, "the queue is full; try again shortly");
    }
    if (counts.integer(1) >= limits.max_pending_per_learner) {
      throw StoreError(
          StoreErrorCode::kLearnerBusy,
          fmt::format("you already have {} jobs waiting or running", limits.max_pending_per_learner));
    }
    Statement insert(db_,
                     "INSERT INTO jobs (learner_id, stage, source, state, created_at, language, client_key)"
                     " VALUES (?, ?, ?, 'queued', ?, ?, NULLIF(?, ''))");
    insert.bind(1, submission.learner_id).bind(2, submission.stage).bind(3, submission.source);
    insert.bind(4, now_seconds()).bind(5, submission.language).bind(6, submission.client_key);
    insert.step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    execute("COMMIT");
    return {id, false};
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

std::int64_t SqliteStore::pending_count() {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT COUNT(*) FROM jobs WHERE state != 'done'");
  query.step();
  return query.integer(0);
}

std::int64_t SqliteStore::queued_count() {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT COUNT(*) FROM jobs WHERE state = 'queued'");
  query.step();
  return query.integer(0);
}

std::int64_t SqliteStore::pending_count(std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT COUNT(*) FROM jobs WHERE state != 'done' AND learner_id = ?");
  query.bind(1, learner_id);
  query.step();
  return query.integer(0);
}

std::int64_t SqliteStore::queue_position(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND id < ?"
                  " AND EXISTS (SELECT 1 FROM jobs WHERE id = ? AND state = 'queued')");
  query.bind(1, job_id).bind(2, job_id);
  query.step();
  return query.integer(0);
}

std::optional<JobRecord> SqliteStore::claim_next(const std::string& holder, double lease_seconds) {
  std::lock_guard lock(mutex_);
  execute("BEGIN IMMEDIATE");
  try {
    std::optional<JobRecord> job;
    {
      // Each learner's oldest queued job; the learner served least recently first (never served
      // counts as longest ago), then the oldest job.
      Statement next(db_, fmt::format("SELECT {} FROM jobs WHERE id = (SELECT j.id FROM jobs AS j"
                                      " JOIN learners AS l ON l.id = j.learner_id WHERE j.state = 'queued'"
                                      " ORDER BY COALESCE(l.last_served_at, 0), j.id LIMIT 1)",
                                      kJobColumns)
                              .c_str());
      if (next.step()) job = read_job(next);
    }
    if (job) {
      const double started = now_seconds();
      Statement claim(db_,
                      "UPDATE jobs SET state = 'running', phase = 'starting', attempts = attempts + 1,"
                      " started_at = ?, holder = ?, lease_until = ? WHERE id = ?");
      claim.bind(1, started).bind(2, holder).bind(3, started + lease_seconds).bind(4, job->id);
      claim.step();
      Statement served(db_, "UPDATE learners SET last_served_at = ? WHERE id = ?");
      served.bind(1, started).bind(2, job->learner_id);
      served.step();
      job->state = JobState::kRunning;
      job->phase = "starting";
      job->attempts += 1;
      job->started_at = started;
      job->holder = holder;
      job->lease_until = started + lease_seconds;
    }
    execute("COMMIT");
    return job;
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

int SqliteStore::renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) {
  std::lock_guard lock(mutex_);
  int renewed = 0;
  for (const JobClaim& claim : claims) {
    Statement update(db_,
                     "UPDATE jobs SET lease_until = ? WHERE id = ? AND state = 'running' AND holder = ?"
                     " AND attempts = ?");
    update.bind(1, now_seconds() + lease_seconds).bind(2, claim.id).bind(3, claim.holder);
    update.bind(4, std::int64_t{claim.attempt});
    update.step();
    renewed += sqlite3_changes(db_);
  }
  return renewed;
}

// The claim's condition, bound at `first`, `first + 1` and `first + 2`.
#define CUDOJO_CURRENT_CLAIM " id = ? AND state = 'running' AND holder = ? AND attempts = ?"

bool SqliteStore::set_phase(const JobClaim& claim, const std::string& phase) {
  std::lock_guard lock(mutex_);
  Statement update(db_, "UPDATE jobs SET phase = ? WHERE" CUDOJO_CURRENT_CLAIM);
  update.bind(1, phase).bind(2, claim.id).bind(3, claim.holder).bind(4, std::int64_t{claim.attempt});
  update.step();
  return sqlite3_changes(db_) == 1;
}

bool SqliteStore::finish(const JobClaim& claim, const std::string& verdict, const std::string& report_json) {
  std::lock_guard lock(mutex_);
  Statement update(db_,
                   "UPDATE jobs SET state = 'done', phase = 'done', verdict = ?, report = ?, finished_at = ?,"
                   " lease_until = NULL WHERE" CUDOJO_CURRENT_CLAIM);
  update.bind(1, verdict).bind(2, report_json).bind(3, now_seconds());
  update.bind(4, claim.id).bind(5, claim.holder).bind(6, std::int64_t{claim.attempt});
  update.step();
  if (sqlite3_changes(db_) == 1) return true;
  // Recorded already under this very claim (the holder stays on a finished job): asking twice is
  // answered the same, as PostgresStore answers a retry after a lost reply.
  Statement recorded(db_,
                     "SELECT 1 FROM jobs WHERE id = ? AND state = 'done' AND holder = ? AND attempts = ?"
                     " AND verdict = ?");
  recorded.bind(1, claim.id).bind(2, claim.holder).bind(3, std::int64_t{claim.attempt}).bind(4, verdict);
  return recorded.step();
}

bool SqliteStore::requeue(const JobClaim& claim, const std::string& phase) {
  std::lock_guard lock(mutex_);
  Statement update(db_,
                   "UPDATE jobs SET state = 'queued', phase = ?, holder = NULL, lease_until = NULL"
                   " WHERE" CUDOJO_CURRENT_CLAIM);
  update.bind(1, phase).bind(2, claim.id).bind(3, claim.holder).bind(4, std::int64_t{claim.attempt});
  update.step();
  return sqlite3_changes(db_) == 1;
}
#undef CUDOJO_CURRENT_CLAIM

int SqliteStore::take_back_running(const char* where, const std::string& phase) {
  std::lock_guard lock(mutex_);
  const double now = now_seconds();
  execute("BEGIN IMMEDIATE");
  try {
    Statement fail(db_,
                   fmt::format("UPDATE jobs SET state = 'done', phase = 'done', verdict = 'internal_error',"
                               " report = ?, finished_at = ?, holder = NULL, lease_until = NULL"
                               " WHERE state = 'running' AND attempts >= ? AND ({})",
                               where)
                       .c_str());
    fail.bind(1, gave_up_report_json()).bind(2, now).bind(3, std::int64_t{kMaxAttempts});
    if (std::string_view(where).find('?') != std::string_view::npos) fail.bind(4, now);
    fail.step();
    const int failed = sqlite3_changes(db_);
    Statement back(
        db_, fmt::format("UPDATE jobs SET state = 'queued', phase = ?, holder = NULL, lease_until = NULL"
                         " WHERE state = 'running' AND ({})",
                         where)
                 .c_str());
    back.bind(1, phase);
    if (std::string_view(where).find('?') != std::string_view::npos) back.bind(2, now);
    back.step();
    const int requeued = sqlite3_changes(db_);
    execute("COMMIT");
    return failed + requeued;
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

int SqliteStore::requeue_expired() {
  return take_back_running("lease_until < ?", "queued again: its judge stopped answering");
}

int SqliteStore::requeue_interrupted() {
  // The data folder's lock says no other server runs: every running job was left by a stopped one.
  return take_back_running("1", "queued again after a restart");
}

std::optional<JobRecord> SqliteStore::job(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {} FROM jobs WHERE id = ?", kJobColumns).c_str());
  query.bind(1, job_id);
  if (!query.step()) return std::nullopt;
  return read_job(query);
}

// SQL for numbers in a job's stored report (NULL when the report is absent, not JSON, or lacks them).
#define CUDOJO_REPORT_NUMBER(path) "(CASE WHEN json_valid(report) THEN json_extract(report, '" path "') END)"
// The ratio the gate judged by: the baseline's when the stage has one, else the reference's.
constexpr const char* kGateRatio = "COALESCE(" CUDOJO_REPORT_NUMBER(
    "$.metrics.baseline_ratio") ", " CUDOJO_REPORT_NUMBER("$.metrics.time_ratio") ")";
constexpr const char* kTimeRatio = CUDOJO_REPORT_NUMBER("$.metrics.time_ratio");
constexpr const char* kBaselineRatio = CUDOJO_REPORT_NUMBER("$.metrics.baseline_ratio");
constexpr const char* kMedianMs = CUDOJO_REPORT_NUMBER("$.metrics.time_ms.median");
#undef CUDOJO_REPORT_NUMBER

std::vector<JobSummary> SqliteStore::history(std::int64_t learner_id, const std::optional<std::string>& stage,
                                             int limit, std::optional<std::int64_t> before) {
  std::lock_guard lock(mutex_);
  // Absent filters bind values that match every row: one statement, one plan.
  Statement query(db_,
                  fmt::format("SELECT id, stage, language, state, verdict, {}, {}, created_at, finished_at"
                              " FROM jobs WHERE learner_id = ? AND (? IS NULL OR stage = ?) AND id < ?"
                              " ORDER BY id DESC LIMIT ?",
                              kTimeRatio, kBaselineRatio)
                      .c_str());
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
  // finished: the learner's done jobs with the numbers read once; best: each stage's accepted jobs,
  // lowest gate ratio first (untimed ones last), of which the first is the stage's best.
  Statement query(
      db_, fmt::format("WITH finished AS (SELECT id, stage, verdict, {} AS ratio, {} AS ms FROM jobs"
                       "  WHERE learner_id = ? AND state = 'done'),"
                       " best AS (SELECT stage, ratio, ms, ROW_NUMBER() OVER (PARTITION BY stage"
                       "  ORDER BY ratio IS NULL, ratio, ms IS NULL, ms, id) AS place"
                       "  FROM finished WHERE verdict = 'accepted')"
                       " SELECT f.stage, COUNT(*), MAX(f.verdict = 'accepted'), b.ratio, b.ms, MAX(f.id)"
                       " FROM finished AS f LEFT JOIN best AS b ON b.stage = f.stage AND b.place = 1"
                       " GROUP BY f.stage ORDER BY f.stage",
                       kGateRatio, kMedianMs)
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

std::vector<LeaderboardEntry> SqliteStore::leaderboard(const std::string& stage, int limit) {
  std::lock_guard lock(mutex_);
  // accepted: timed accepted jobs of opted-in learners; ranked: each learner's jobs, best first.
  Statement query(
      db_, fmt::format(
               "WITH accepted AS (SELECT j.id, j.learner_id, j.language, j.finished_at,"
               "  {} AS ratio, {} AS ms FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
               "  WHERE j.stage = ? AND j.state = 'done' AND j.verdict = 'accepted' AND l.leaderboard = 1),"
               " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY learner_id ORDER BY ratio, id)"
               "  AS place FROM accepted WHERE ratio IS NOT NULL)"
               " SELECT l.name, r.ratio, r.ms, r.language, COALESCE(r.finished_at, 0)"
               " FROM ranked AS r JOIN learners AS l ON l.id = r.learner_id"
               " WHERE r.place = 1 ORDER BY r.ratio, r.id LIMIT ?",
               kGateRatio, kMedianMs)
               .c_str());
  query.bind(1, stage).bind(2, std::int64_t{limit});
  std::vector<LeaderboardEntry> entries;
  while (query.step()) {
    entries.push_back({query.text(0), query.real(1), query.optional_real(2), query.text(3), query.real(4)});
  }
  return entries;
}

void SqliteStore::register_node(const NodeInfo& node) {
  std::lock_guard lock(mutex_);
  Statement upsert(db_,
                   "INSERT INTO nodes (name, host, gpu, workers, http, started_at, last_seen)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET host = excluded.host,"
                   " gpu = excluded.gpu, workers = excluded.workers, http = excluded.http,"
                   " last_seen = excluded.last_seen");
  const double now = now_seconds();
  upsert.bind(1, node.name).bind(2, node.host).bind(3, node.gpu).bind(4, std::int64_t{node.workers});
  upsert.bind(5, std::int64_t{node.http ? 1 : 0})
      .bind(6, node.started_at ? node.started_at : now)
      .bind(7, now);
  upsert.step();
}

std::vector<NodeInfo> SqliteStore::nodes(double seen_within_seconds) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT name, host, gpu, workers, http, started_at, last_seen FROM nodes"
                  " WHERE last_seen >= ? ORDER BY name");
  query.bind(1, now_seconds() - seen_within_seconds);
  std::vector<NodeInfo> nodes;
  while (query.step()) {
    nodes.push_back({query.text(0), query.text(1), query.text(2), static_cast<int>(query.integer(3)),
                     query.integer(4) != 0, query.real(5), query.real(6)});
  }
  return nodes;
}

}  // namespace cudojo

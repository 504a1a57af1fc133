#include "serve/store.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sqlite3.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/json_text.h"
#include "report/report.h"

namespace cudojo {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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
    "finished_at, language";

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
  return job;
}

std::string random_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw StoreError(StoreErrorCode::kInternal, "no randomness for a token");
  std::string hex;
  for (unsigned char byte : bytes) hex += fmt::format("{:02x}", byte);
  return hex;
}

}  // namespace

std::string_view to_string(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kDone:
      return "done";
  }
  return "queued";
}

std::string token_digest(const std::string& token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(token.data(), token.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw StoreError(StoreErrorCode::kInternal, "SHA-256 failed");
  }
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

Store::Store(const std::filesystem::path& file, int busy_timeout_ms) {
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

std::optional<std::string> Store::problem() {
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

Store::~Store() { sqlite3_close(db_); }

// The schema's versions (PRAGMA user_version): 0, the first; 1 adds jobs.language (Python and Rust
// submissions), every older job being CUDA C++; 2 adds learners.leaderboard (opted in to the
// leaderboards), every older learner being opted out. Each step runs once, in a transaction.
void Store::migrate() {
  Statement version_query(db_, "PRAGMA user_version");
  version_query.step();
  const std::int64_t version = version_query.integer(0);
  if (version >= 2) return;
  // Whether `table` already has `column` (a database made by this version's CREATE TABLE lacks it,
  // but one half-migrated by hand might not).
  auto has_column = [this](const char* table, const std::string& column) {
    Statement columns(db_, fmt::format("PRAGMA table_info({})", table).c_str());
    bool found = false;
    while (columns.step()) found = found || columns.text(1) == column;
    return found;
  };
  execute("BEGIN IMMEDIATE");
  try {
    if (version < 1) {
      if (!has_column("jobs", "language"))
        execute("ALTER TABLE jobs ADD COLUMN language TEXT NOT NULL DEFAULT 'cuda'");
      execute("PRAGMA user_version = 1");
    }
    if (!has_column("learners", "leaderboard"))
      execute("ALTER TABLE learners ADD COLUMN leaderboard INTEGER NOT NULL DEFAULT 0");
    execute("PRAGMA user_version = 2");
    execute("COMMIT");
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

void Store::execute(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw StoreError(StoreErrorCode::kInternal, fmt::format("SQL failed: {} ({})", message, sql));
  }
}

IssuedLearner Store::create_learner(const std::string& requested) {
  // Words of letters, digits, '_', '.' and '-', one space between words; spaces around are trimmed.
  static const std::regex kName(R"([A-Za-z0-9_.-]+( [A-Za-z0-9_.-]+)*)");
  const auto first = requested.find_first_not_of(' ');
  const std::string name =
      first == std::string::npos ? "" : requested.substr(first, requested.find_last_not_of(' ') - first + 1);
  if (name.size() > 40 || !std::regex_match(name, kName)) {
    throw StoreError(StoreErrorCode::kInvalidName,
                     "a learner name is 1 to 40 characters: letters, digits, '_', '.', '-', and single "
                     "spaces between words");
  }
  std::lock_guard lock(mutex_);
  {
    Statement taken(db_, "SELECT 1 FROM learners WHERE name = ?");
    taken.bind(1, name);
    if (taken.step())
      throw StoreError(StoreErrorCode::kNameTaken, fmt::format("the name '{}' is taken", name));
  }
  IssuedLearner issued;
  issued.token = random_token();
  Statement insert(db_, "INSERT INTO learners (name, token_sha256, created_at) VALUES (?, ?, ?)");
  insert.bind(1, name).bind(2, token_digest(issued.token)).bind(3, now_seconds());
  insert.step();
  issued.learner = {sqlite3_last_insert_rowid(db_), name};
  return issued;
}

std::optional<Learner> Store::find_learner_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT id, name, leaderboard FROM learners WHERE token_sha256 = ?");
  query.bind(1, token_digest(token));
  if (!query.step()) return std::nullopt;
  return Learner{query.integer(0), query.text(1), query.integer(2) != 0};
}

std::optional<Learner> Store::set_leaderboard(std::int64_t learner_id, bool leaderboard) {
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

std::int64_t Store::enqueue(std::int64_t learner_id, const std::string& stage, const std::string& source,
                            const QueueLimits& limits, const std::string& language) {
  std::lock_guard lock(mutex_);
  // BEGIN IMMEDIATE takes the write lock first, so the counts below cannot change before the insert,
  // also when another process shares the file.
  execute("BEGIN IMMEDIATE");
  try {
    Statement counts(db_,
                     "SELECT COUNT(*), COALESCE(SUM(learner_id = ?), 0) FROM jobs WHERE state != 'done'");
    counts.bind(1, learner_id);
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
                     "INSERT INTO jobs (learner_id, stage, source, state, created_at, language) VALUES (?, "
                     "?, ?, 'queued', ?, ?)");
    insert.bind(1, learner_id).bind(2, stage).bind(3, source).bind(4, now_seconds()).bind(5, language);
    insert.step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    execute("COMMIT");
    return id;
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

std::int64_t Store::pending_count() {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT COUNT(*) FROM jobs WHERE state != 'done'");
  query.step();
  return query.integer(0);
}

bool Store::requeue(std::int64_t job_id, const std::string& phase) {
  std::lock_guard lock(mutex_);
  Statement update(db_, "UPDATE jobs SET state = 'queued', phase = ? WHERE id = ? AND state = 'running'");
  update.bind(1, phase).bind(2, job_id);
  update.step();
  return sqlite3_changes(db_) == 1;
}

std::int64_t Store::queued_count() {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT COUNT(*) FROM jobs WHERE state = 'queued'");
  query.step();
  return query.integer(0);
}

std::int64_t Store::pending_count(std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT COUNT(*) FROM jobs WHERE state != 'done' AND learner_id = ?");
  query.bind(1, learner_id);
  query.step();
  return query.integer(0);
}

std::int64_t Store::queue_position(std::int64_t job_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_,
                  "SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND id < ?"
                  " AND EXISTS (SELECT 1 FROM jobs WHERE id = ? AND state = 'queued')");
  query.bind(1, job_id).bind(2, job_id);
  query.step();
  return query.integer(0);
}

std::optional<JobRecord> Store::claim_next() {
  std::lock_guard lock(mutex_);
  execute("BEGIN IMMEDIATE");
  try {
    std::optional<JobRecord> job;
    {
      // Round robin by learner: each learner's oldest queued job, the learner served least recently
      // first (never served counts as longest ago), then the oldest job. One learner's many jobs
      // cannot make another learner wait behind all of them.
      Statement next(
          db_, fmt::format("SELECT {} FROM jobs AS j WHERE j.state = 'queued' AND j.id = "
                           "(SELECT MIN(id) FROM jobs WHERE state = 'queued' AND learner_id = j.learner_id) "
                           "ORDER BY (SELECT COALESCE(MAX(started_at), 0) FROM jobs "
                           "WHERE learner_id = j.learner_id AND started_at IS NOT NULL), j.id LIMIT 1",
                           kJobColumns)
                   .c_str());
      if (next.step()) job = read_job(next);
    }
    if (job) {
      Statement claim(db_,
                      "UPDATE jobs SET state = 'running', phase = 'starting', attempts = attempts + 1,"
                      " started_at = ? WHERE id = ?");
      const double started = now_seconds();
      claim.bind(1, started).bind(2, job->id);
      claim.step();
      job->state = JobState::kRunning;
      job->phase = "starting";
      job->attempts += 1;
      job->started_at = started;
    }
    execute("COMMIT");
    return job;
  } catch (...) {
    execute("ROLLBACK");
    throw;
  }
}

void Store::set_phase(std::int64_t job_id, const std::string& phase) {
  std::lock_guard lock(mutex_);
  Statement update(db_, "UPDATE jobs SET phase = ? WHERE id = ? AND state = 'running'");
  update.bind(1, phase).bind(2, job_id);
  update.step();
}

bool Store::finish(std::int64_t job_id, const std::string& verdict, const std::string& report_json) {
  std::lock_guard lock(mutex_);
  Statement update(db_,
                   "UPDATE jobs SET state = 'done', phase = 'done', verdict = ?, report = ?, finished_at = ?"
                   " WHERE id = ? AND state = 'running'");
  update.bind(1, verdict).bind(2, report_json).bind(3, now_seconds()).bind(4, job_id);
  update.step();
  return sqlite3_changes(db_) == 1;
}

int Store::requeue_interrupted() {
  std::lock_guard lock(mutex_);
  Report report;
  report.verdict = Verdict::kInternalError;
  report.message =
      fmt::format("the server stopped while running this job {} times; it was not run again", kMaxAttempts);
  const std::string gave_up = json_text(nlohmann::json(report));
  Statement fail(db_,
                 "UPDATE jobs SET state = 'done', phase = 'done', verdict = 'internal_error', report = ?,"
                 " finished_at = ? WHERE state = 'running' AND attempts >= ?");
  fail.bind(1, gave_up).bind(2, now_seconds()).bind(3, std::int64_t{kMaxAttempts});
  fail.step();
  Statement requeue(
      db_,
      "UPDATE jobs SET state = 'queued', phase = 'queued again after a restart' WHERE state = 'running'");
  requeue.step();
  return sqlite3_changes(db_);
}

std::optional<JobRecord> Store::job(std::int64_t job_id) {
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

std::vector<JobSummary> Store::history(std::int64_t learner_id, const std::optional<std::string>& stage,
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

std::vector<StageProgress> Store::progress(std::int64_t learner_id) {
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

std::vector<LeaderboardEntry> Store::leaderboard(const std::string& stage, int limit) {
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

}  // namespace cudojo

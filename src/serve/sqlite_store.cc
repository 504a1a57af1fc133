// SqliteStore's file and the rows beside the jobs: opening the file (its schema, its migrations,
// its integrity check), whether it is still the file opened, learners and nodes. The jobs' queue is
// in sqlite_jobs.cc, the queries over finished jobs in sqlite_queries.cc.
#include "serve/sqlite_store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include "serve/sqlite_statement.h"
#include "serve/store_internal.h"

namespace cudojo {

using sqlite_internal::roll_back_after_failure;
using sqlite_internal::Statement;
using store_internal::now_seconds;

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
  // What job_progress reads, so it never reads a job's row (see there).
  execute("CREATE INDEX IF NOT EXISTS jobs_progress ON jobs(id, state, phase)");
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
    // A read of the table that must be there, which costs the same however many learners it holds.
    Statement query(db_, "SELECT 1 FROM learners LIMIT 1");
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
// unique per learner); 5 adds jobs.client_address (the address a submission came from, over which
// each address's share of the queue is counted; NULL for older jobs, which no address then holds);
// 6 adds classes (every learner before it lands in the default class, keeping token and history),
// staff, deadlines, drafts and the audit log, makes names unique within a class rather than the
// server, and keeps each finished job's gate figures in columns (filled from the stored reports);
// 7 adds rejudgings (serve/store_rejudging.h: jobs.rejudging_id, rejudges_job) and each job's stage
// version (jobs.stage_version, read from its report like the figures); 8 adds job_shares (links to
// one job, serve/store_shares.h); 9 adds jobs.profile (a profile asked for, issue #28) and
// ncu_reports (the Nsight Compute report a profiled job kept, dropped with its job); 10 adds
// classes.sharing_open (an instructor's switch for links to jobs, on for every older class) and
// job_shares.stopped_by (the member of staff who stopped a link; NULL for every older one, stopped by
// its learner).
// Steps up to 5, 9 and 10 only add, and run again harmlessly; 6 rebuilds the learners table (SQLite cannot
// drop its old UNIQUE), so it runs only on a database older than it. Everything runs in one
// transaction, with foreign keys checked before it commits.
void SqliteStore::migrate() {
  constexpr std::int64_t kCurrentVersion = 10;
  // Read and finished at once: a statement left open would keep DROP TABLE below from running.
  const std::int64_t version = [this] {
    Statement version_query(db_, "PRAGMA user_version");
    version_query.step();
    return version_query.integer(0);
  }();
  if (version > kCurrentVersion) {
    throw StoreError(
        StoreErrorCode::kInternal,
        fmt::format("{} has schema version {}, newer than this cudojo's {}; run the newer cudojo",
                    file_.string(), version, kCurrentVersion));
  }
  if (version == kCurrentVersion) return;
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
  // Foreign keys cannot be switched inside a transaction; the rebuild of learners needs them off
  // (SQLite's own procedure for changing a table's constraints), and they are checked before COMMIT.
  execute("PRAGMA foreign_keys=OFF");
  execute("BEGIN IMMEDIATE");
  try {
    add_column("jobs", "language", "TEXT NOT NULL DEFAULT 'cuda'");
    add_column("learners", "leaderboard", "INTEGER NOT NULL DEFAULT 0");
    add_column("jobs", "holder", "TEXT");
    add_column("jobs", "lease_until", "REAL");
    add_column("learners", "last_served_at", "REAL");
    add_column("jobs", "client_key", "TEXT");
    // No index: submit counts an address's jobs in the scan of pending jobs it makes anyway.
    add_column("jobs", "client_address", "TEXT");
    add_column("jobs", "profile", "INTEGER NOT NULL DEFAULT 0");
    // job_id may be NULL for a moment only: while an applied rejudging swaps two jobs' reports.
    execute(
        "CREATE TABLE IF NOT EXISTS ncu_reports (id INTEGER PRIMARY KEY,"
        " job_id INTEGER UNIQUE REFERENCES jobs(id) ON DELETE CASCADE, bytes INTEGER NOT NULL,"
        " report BLOB NOT NULL, kept_at REAL NOT NULL)");
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
    if (version < 6) migrate_to_classes();
    if (version < 7) migrate_to_rejudging();
    if (version < 8) migrate_to_shares();
    add_column("classes", "sharing_open", "INTEGER NOT NULL DEFAULT 1");
    add_column("job_shares", "stopped_by", "TEXT");
    {
      Statement broken(db_, "PRAGMA foreign_key_check");
      if (broken.step())
        throw StoreError(
            StoreErrorCode::kInternal,
            fmt::format("the migration left a row of {} without its {}", broken.text(0), broken.text(2)));
    }
    execute(fmt::format("PRAGMA user_version = {}", kCurrentVersion).c_str());
    execute("COMMIT");
  } catch (...) {
    roll_back_after_failure(db_);
    execute("PRAGMA foreign_keys=ON");
    throw;
  }
  execute("PRAGMA foreign_keys=ON");
}

void SqliteStore::migrate_to_classes() {
  execute(
      "CREATE TABLE classes (id INTEGER PRIMARY KEY, name TEXT NOT NULL, invite_code TEXT NOT NULL UNIQUE,"
      " is_default INTEGER NOT NULL DEFAULT 0, joining_open INTEGER NOT NULL DEFAULT 1,"
      " created_at REAL NOT NULL)");
  execute("CREATE UNIQUE INDEX classes_one_default ON classes(is_default) WHERE is_default = 1");
  {
    Statement insert(db_,
                     "INSERT INTO classes (name, invite_code, is_default, created_at) VALUES (?, ?, 1, ?)");
    insert.bind(1, std::string(kDefaultClassName))
        .bind(2, store_internal::random_invite_code())
        .bind(3, now_seconds());
    insert.step();
  }
  // Every learner so far joined by open sign-up and holds their token: the default class, signed in.
  execute(
      "CREATE TABLE learners_new (id INTEGER PRIMARY KEY,"
      " class_id INTEGER NOT NULL REFERENCES classes(id), name TEXT NOT NULL,"
      " token_sha256 TEXT NOT NULL UNIQUE, created_at REAL NOT NULL, leaderboard INTEGER NOT NULL DEFAULT 0,"
      " last_served_at REAL, student_id TEXT, email TEXT, signed_in_at REAL, removed_at REAL,"
      " origin TEXT NOT NULL DEFAULT 'open' CHECK (origin IN ('open', 'invite', 'roster')),"
      " UNIQUE (class_id, student_id))");
  execute(
      "INSERT INTO learners_new (id, class_id, name, token_sha256, created_at, leaderboard,"
      " last_served_at, signed_in_at) SELECT id, (SELECT id FROM classes WHERE is_default = 1), name,"
      " token_sha256, created_at, leaderboard, last_served_at, created_at FROM learners");
  execute("DROP TABLE learners");
  execute("ALTER TABLE learners_new RENAME TO learners");
  execute("CREATE INDEX learners_by_class ON learners(class_id, created_at)");
  // A removed learner's name is free for someone else (a roster's real owner of a name a joiner took).
  execute("CREATE UNIQUE INDEX learners_active_name ON learners(class_id, name) WHERE removed_at IS NULL");
  execute(
      "CREATE TABLE staff (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
      " token_sha256 TEXT NOT NULL UNIQUE, admin INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL)");
  execute(
      "CREATE TABLE class_staff (class_id INTEGER NOT NULL REFERENCES classes(id),"
      " staff_id INTEGER NOT NULL REFERENCES staff(id), role TEXT NOT NULL CHECK (role IN ('instructor', "
      "'ta')),"
      " PRIMARY KEY (class_id, staff_id))");
  execute(
      "CREATE TABLE deadlines (class_id INTEGER NOT NULL REFERENCES classes(id), stage TEXT NOT NULL,"
      " due_at REAL NOT NULL, hide_leaderboard INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (class_id, stage))");
  execute(
      "CREATE TABLE drafts (learner_id INTEGER NOT NULL REFERENCES learners(id), stage TEXT NOT NULL,"
      " language TEXT NOT NULL, source TEXT NOT NULL, updated_at REAL NOT NULL,"
      " PRIMARY KEY (learner_id, stage, language))");
  execute(
      "CREATE TABLE audit (id INTEGER PRIMARY KEY, at REAL NOT NULL, actor_kind TEXT NOT NULL,"
      " actor_id INTEGER NOT NULL, actor_name TEXT NOT NULL, class_id INTEGER, action TEXT NOT NULL,"
      " detail TEXT NOT NULL)");
  execute("CREATE INDEX audit_by_class ON audit(class_id, id)");
  // The gate's figures of each finished job, read out of its report once instead of at every query:
  // a trigger reads them whenever a report is written (a verdict recorded, a job given up), by
  // whatever statement writes it.
  execute("ALTER TABLE jobs ADD COLUMN time_ratio REAL");
  execute("ALTER TABLE jobs ADD COLUMN baseline_ratio REAL");
  execute("ALTER TABLE jobs ADD COLUMN time_ms REAL");
  const std::string read_figures =
      fmt::format("UPDATE jobs SET time_ratio = {}, baseline_ratio = {}, time_ms = {}",
                  sqlite_internal::report_number("report", "$.metrics.time_ratio"),
                  sqlite_internal::report_number("report", "$.metrics.baseline_ratio"),
                  sqlite_internal::report_number("report", "$.metrics.time_ms.median"));
  for (const char* when : {"INSERT", "UPDATE OF report"}) {
    execute(
        fmt::format("CREATE TRIGGER jobs_gate_figures_{} AFTER {} ON jobs BEGIN {} WHERE id = NEW.id; END",
                    when[0] == 'I' ? "inserted" : "reported", when, read_figures)
            .c_str());
  }
  execute((read_figures + " WHERE report IS NOT NULL").c_str());
  // Everything the grid and a learner's progress read of a job, in one index: a report of a few KB
  // spills into overflow pages, and the figures' columns come after it in the row, so reading them
  // from the table would walk every report (a class's grid took 250 ms with 30,000 jobs).
  execute(
      "CREATE INDEX jobs_figures ON jobs(learner_id, state, stage, verdict, created_at, baseline_ratio,"
      " time_ratio, time_ms)");
}

void SqliteStore::migrate_to_rejudging() {
  execute(
      "CREATE TABLE rejudgings (id INTEGER PRIMARY KEY, class_id INTEGER REFERENCES classes(id),"
      " created_at REAL NOT NULL, actor_kind TEXT NOT NULL, actor_id INTEGER NOT NULL,"
      " actor_name TEXT NOT NULL, filter TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',"
      " state TEXT NOT NULL DEFAULT 'judging' CHECK (state IN ('judging', 'applied', 'cancelled')),"
      " ended_at REAL)");
  execute("ALTER TABLE jobs ADD COLUMN rejudging_id INTEGER REFERENCES rejudgings(id)");
  execute("ALTER TABLE jobs ADD COLUMN rejudges_job INTEGER REFERENCES jobs(id)");
  execute("ALTER TABLE jobs ADD COLUMN stage_version TEXT");
  execute("CREATE INDEX jobs_by_rejudging ON jobs(rejudging_id) WHERE rejudging_id IS NOT NULL");
  // Deleting a job looks for reruns naming it (the foreign key), and a new rejudging skips jobs an
  // open one holds: both by this index, not a scan of every job.
  execute("CREATE INDEX jobs_by_rejudged ON jobs(rejudges_job) WHERE rejudges_job IS NOT NULL");
  const std::string read_version = fmt::format(
      "UPDATE jobs SET stage_version = CASE WHEN json_valid(report)"
      " THEN json_extract(report, '$.stage_version.digest') END");
  for (const char* when : {"INSERT", "UPDATE OF report"}) {
    execute(
        fmt::format("CREATE TRIGGER jobs_stage_version_{} AFTER {} ON jobs BEGIN {} WHERE id = NEW.id; END",
                    when[0] == 'I' ? "inserted" : "reported", when, read_version)
            .c_str());
  }
  // The grid and progress read only this index (see migrate_to_classes); they now also leave out
  // reruns, and the versions' count reads the stage version, so both join it.
  execute("DROP INDEX jobs_figures");
  execute(
      "CREATE INDEX jobs_figures ON jobs(learner_id, state, stage, verdict, created_at, baseline_ratio,"
      " time_ratio, time_ms, rejudging_id, stage_version)");
}

void SqliteStore::execute(const char* sql) { sqlite_internal::execute(db_, sql); }

IssuedLearner SqliteStore::add_learner(const NewLearner& wanted) {
  const std::string name = store_internal::checked_learner_name(wanted.name);
  std::lock_guard lock(mutex_);
  return sqlite_internal::in_transaction(db_, [&] {
    std::int64_t class_id = wanted.class_id;
    if (class_id == 0) {
      Statement default_class(db_, "SELECT id FROM classes WHERE is_default = 1");
      if (!default_class.step()) throw StoreError(StoreErrorCode::kInternal, "the default class is missing");
      class_id = default_class.integer(0);
    }
    const double now = now_seconds();
    // The caps and the name, counted under the write lock BEGIN IMMEDIATE took: nothing can join
    // between the count and the insert.
    Statement counts(db_,
                     "SELECT COALESCE(SUM(removed_at IS NULL), 0),"
                     " COALESCE(SUM(origin = 'invite' AND created_at >= ?), 0),"
                     " COALESCE(SUM(removed_at IS NULL AND name = ?), 0) FROM learners WHERE class_id = ?");
    counts.bind(1, now - 3600).bind(2, name).bind(3, class_id);
    counts.step();
    store_internal::check_new_learner(wanted, name, counts.integer(0), counts.integer(1),
                                      counts.integer(2) > 0);
    IssuedLearner issued;
    issued.token = store_internal::random_token();
    Statement insert(
        db_,
        "INSERT INTO learners (class_id, name, token_sha256, created_at, signed_in_at, email, origin)"
        " VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), ?)");
    insert.bind(1, class_id).bind(2, name).bind(3, token_digest(issued.token)).bind(4, now).bind(5, now);
    insert.bind(6, wanted.email).bind(7, std::string(to_string(wanted.origin)));
    insert.step();
    issued.learner.id = sqlite3_last_insert_rowid(db_);
    issued.learner.name = name;
    issued.learner.class_id = class_id;
    if (!wanted.email.empty()) issued.learner.email = wanted.email;
    return issued;
  });
}

namespace {

constexpr const char* kLearnerColumns = "id, name, leaderboard, class_id, student_id, email";

Learner read_learner(const Statement& row) {
  return {row.integer(0), row.text(1),          row.integer(2) != 0,
          row.integer(3), row.optional_text(4), row.optional_text(5)};
}

}  // namespace

std::optional<Learner> SqliteStore::find_learner_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  std::lock_guard lock(mutex_);
  Statement query(db_, fmt::format("SELECT {}, signed_in_at IS NULL FROM learners"
                                   " WHERE token_sha256 = ? AND removed_at IS NULL",
                                   kLearnerColumns)
                           .c_str());
  query.bind(1, token_digest(token));
  if (!query.step()) return std::nullopt;
  const Learner learner = read_learner(query);
  if (query.integer(6) != 0) {
    // The first use of a token handed out for a roster: the learner has it now.
    Statement first_use(db_, "UPDATE learners SET signed_in_at = ? WHERE id = ? AND signed_in_at IS NULL");
    first_use.bind(1, now_seconds()).bind(2, learner.id);
    first_use.step();
  }
  return learner;
}

std::optional<Learner> SqliteStore::set_leaderboard(std::int64_t learner_id, bool leaderboard) {
  std::lock_guard lock(mutex_);
  {
    Statement update(db_, "UPDATE learners SET leaderboard = ? WHERE id = ?");
    update.bind(1, std::int64_t{leaderboard ? 1 : 0}).bind(2, learner_id);
    update.step();
  }
  Statement query(db_, fmt::format("SELECT {} FROM learners WHERE id = ?", kLearnerColumns).c_str());
  query.bind(1, learner_id);
  if (!query.step()) return std::nullopt;
  return read_learner(query);
}

std::optional<std::string> SqliteStore::learner_token_digest(std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT token_sha256 FROM learners WHERE id = ? AND removed_at IS NULL");
  query.bind(1, learner_id);
  if (!query.step()) return std::nullopt;
  return query.text(0);
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

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
// each address's share of the queue is counted; NULL for older jobs, which no address then holds).
// Each step runs once, in one transaction.
void SqliteStore::migrate() {
  constexpr std::int64_t kCurrentVersion = 5;
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
    // No index: submit counts an address's jobs in the scan of pending jobs it makes anyway.
    add_column("jobs", "client_address", "TEXT");
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
    roll_back_after_failure(db_);
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

std::optional<std::string> SqliteStore::learner_token_digest(std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  Statement query(db_, "SELECT token_sha256 FROM learners WHERE id = ?");
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

// For the SQLite store's own files only (sqlite_store.cc, sqlite_jobs.cc, sqlite_queries.cc): the
// prepared-statement wrapper they all use, how a job row is read, and how a failed transaction is
// undone without hiding why it failed.
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "serve/store.h"

namespace cudojo::sqlite_internal {

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
  Statement& bind_blob(int index, const std::string& bytes) {
    sqlite3_bind_blob64(statement_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
    return *this;
  }
  // NULL for nullopt.
  Statement& bind(int index, const std::optional<std::string>& value) {
    if (value) return bind(index, *value);
    sqlite3_bind_null(statement_, index);
    return *this;
  }
  Statement& bind(int index, const std::optional<std::int64_t>& value) {
    if (value) return bind(index, *value);
    sqlite3_bind_null(statement_, index);
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
  std::string blob(int column) const {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(statement_, column));
    return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))) : "";
  }
  std::optional<std::string> optional_text(int column) const {
    return is_null(column) ? std::nullopt : std::optional<std::string>(text(column));
  }
  std::optional<double> optional_real(int column) const {
    return is_null(column) ? std::nullopt : std::optional<double>(real(column));
  }
  std::optional<std::int64_t> optional_integer(int column) const {
    return is_null(column) ? std::nullopt : std::optional<std::int64_t>(integer(column));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

// SQL for a number at `path` ("$.metrics.time_ratio") in the JSON text of `column`: NULL when the
// text is absent, not JSON, or lacks the number.
inline std::string report_number(const char* column, const char* path) {
  return fmt::format("(CASE WHEN json_valid({0}) THEN json_extract({0}, '{1}') END)", column, path);
}

// The columns every job query selects, in this order.
inline constexpr const char* kJobColumns =
    "id, learner_id, stage, source, state, phase, attempts, verdict, report, created_at, started_at, "
    "finished_at, language, holder, lease_until, rejudging_id, profile";

inline JobState parse_state(const std::string& text) {
  if (text == "running") return JobState::kRunning;
  if (text == "done") return JobState::kDone;
  return JobState::kQueued;
}

inline JobRecord read_job(const Statement& row) {
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
  job.rejudging_id = row.optional_integer(15);
  job.profile = row.integer(16) != 0;
  return job;
}

// Undoes what is left of a transaction after a failure inside it, keeping that failure the one the
// caller sees. SQLite ends the transaction itself on some errors (SQLITE_FULL, SQLITE_IOERR,
// SQLITE_NOMEM, ...), and a ROLLBACK then fails with "cannot rollback - no transaction is active":
// thrown from the handler, that would replace "database or disk is full" in the server's answer. So
// it rolls back only while a transaction is open, and a rollback that fails is ignored (the
// connection is back in autocommit either way; nothing of the transaction was committed).
inline void roll_back_after_failure(sqlite3* db) noexcept {
  if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
}

// Runs SQL that returns no rows; throws StoreError(kInternal) naming it when it fails.
inline void execute(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw StoreError(StoreErrorCode::kInternal, fmt::format("SQL failed: {} ({})", message, sql));
  }
}

// Runs `work` inside BEGIN IMMEDIATE ... COMMIT (the write lock taken first, so what it reads cannot
// change before it writes), rolled back when it throws. Returns what `work` returns.
template <typename Work>
auto in_transaction(sqlite3* db, Work&& work) {
  execute(db, "BEGIN IMMEDIATE");
  try {
    if constexpr (std::is_void_v<decltype(work())>) {
      work();
      execute(db, "COMMIT");
    } else {
      auto result = work();
      execute(db, "COMMIT");
      return result;
    }
  } catch (...) {
    roll_back_after_failure(db);
    throw;
  }
}

}  // namespace cudojo::sqlite_internal

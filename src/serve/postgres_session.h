// For the PostgreSQL store's own files only (postgres_store.cc, postgres_jobs.cc,
// postgres_queries.cc): what every call needs to talk to the database. A Session is one pooled
// connection lent to one call, running statements whose answers are Rows, with Params sent as text;
// with_session lends it and retries a call whose first statement found the connection dead.
#pragma once

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "serve/postgres_store.h"

// The database server's clock in seconds since the epoch: every node reads time from one place.
#define CUDOJO_NOW "EXTRACT(EPOCH FROM clock_timestamp())::float8"
// The channel a job's arrival in the queue is announced on (delivered when its transaction commits).
#define CUDOJO_NEW_JOBS_CHANNEL "cudojo_new_jobs"
#define CUDOJO_ANNOUNCE_NEW_JOBS "SELECT pg_notify('" CUDOJO_NEW_JOBS_CHANNEL "', '')"

namespace cudojo {

namespace postgres_internal {

// Advisory lock keys (any 64-bit numbers no other program on the database uses), kept in one list so
// no two of them are the same.
inline constexpr std::int64_t kSchemaLock = 0x6375646f6a6f01;   // "cudojo" + 1: migrations
inline constexpr std::int64_t kQueueLock = 0x6375646f6a6f02;    // enqueue's count-then-insert
inline constexpr std::int64_t kRejudgeLock = 0x6375646f6a6f03;  // a rejudging's choice of jobs

// Whether a failed call is worth trying again shortly, rather than the SQL or the data being wrong:
// a broken connection; SQLSTATE class 08 (connection exception) or 57P0x (the server shutting
// down or starting); or a wait that was cut short (55P03 lock_timeout, 57014 statement_timeout,
// 40001 serialization, 40P01 deadlock), as when a cut-off node's backend still holds a row.
inline bool is_unavailable(PGconn* connection, const PGresult* result) {
  if (PQstatus(connection) != CONNECTION_OK) return true;
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (!state) return true;  // no SQLSTATE: libpq lost the server before it answered
  const std::string_view code = state;
  return code.starts_with("08") || code.starts_with("57P") || code == "55P03" || code == "57014" ||
         code == "40001" || code == "40P01" || code == "25006" || code.starts_with("53") || code == "58030";
}

// Whether the connection itself is gone (as opposed to a statement refused on a live one).
inline bool is_broken(PGconn* connection, const std::string& code) {
  return PQstatus(connection) != CONNECTION_OK || code.empty() || code.starts_with("08") ||
         code.starts_with("57P");
}

inline std::string first_line(const char* message) {
  std::string line = message ? message : "";
  if (const auto end = line.find('\n'); end != std::string::npos) line.resize(end);
  return line;
}

// A query's answer: rows of text values, read by column.
class Rows {
 public:
  explicit Rows(PGresult* result) : result_(result) {}
  ~Rows() { PQclear(result_); }
  Rows(Rows&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  int size() const { return PQntuples(result_); }
  bool empty() const { return size() == 0; }
  int affected() const { return std::atoi(PQcmdTuples(result_)); }
  bool is_null(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }
  std::string text(int row, int column) const {
    return std::string(PQgetvalue(result_, row, column),
                       static_cast<std::size_t>(PQgetlength(result_, row, column)));
  }
  std::int64_t integer(int row, int column) const {
    return std::strtoll(PQgetvalue(result_, row, column), nullptr, 10);
  }
  double real(int row, int column) const { return std::strtod(PQgetvalue(result_, row, column), nullptr); }
  bool boolean(int row, int column) const { return PQgetvalue(result_, row, column)[0] == 't'; }
  std::optional<std::string> optional_text(int row, int column) const {
    return is_null(row, column) ? std::nullopt : std::optional<std::string>(text(row, column));
  }
  std::optional<double> optional_real(int row, int column) const {
    return is_null(row, column) ? std::nullopt : std::optional<double>(real(row, column));
  }
  std::optional<std::int64_t> optional_integer(int row, int column) const {
    return is_null(row, column) ? std::nullopt : std::optional<std::int64_t>(integer(row, column));
  }

 private:
  PGresult* result_;
};

// A statement's parameters, all sent as text (PostgreSQL casts them to the columns' types).
class Params {
 public:
  Params& add(const std::string& value) {
    values_.push_back(value);
    null_.push_back(false);
    return *this;
  }
  Params& add(std::int64_t value) { return add(std::to_string(value)); }
  Params& add(int value) { return add(std::to_string(value)); }
  Params& add(double value) { return add(fmt::format("{:.17g}", value)); }
  Params& add(bool value) { return add(std::string(value ? "true" : "false")); }
  Params& add(const std::optional<std::string>& value) {
    if (value) return add(*value);
    values_.emplace_back();
    null_.push_back(true);
    return *this;
  }
  Params& add(const std::optional<std::int64_t>& value) {
    return value ? add(*value) : add(std::optional<std::string>());
  }
  Params& add(const std::optional<bool>& value) {
    return value ? add(*value) : add(std::optional<std::string>());
  }
  std::vector<const char*> pointers() const {
    std::vector<const char*> pointers;
    for (std::size_t i = 0; i < values_.size(); ++i)
      pointers.push_back(null_[i] ? nullptr : values_[i].c_str());
    return pointers;
  }

 private:
  std::vector<std::string> values_;
  std::vector<bool> null_;
};

// The columns every job query selects, in this order (read_job's), qualified by `table`.
inline std::string job_columns(std::string_view table) {
  std::string columns;
  for (const char* column : {"id", "learner_id", "stage", "source", "state", "phase", "attempts", "verdict",
                             "report", "created_at", "started_at", "finished_at", "language", "holder",
                             "lease_until", "rejudging_id", "profile"}) {
    if (!columns.empty()) columns += ", ";
    columns += fmt::format("{}.{}", table, column);
  }
  return columns;
}

inline JobState parse_state(const std::string& text) {
  if (text == "running") return JobState::kRunning;
  if (text == "done") return JobState::kDone;
  return JobState::kQueued;
}

inline JobRecord read_job(const Rows& rows, int row) {
  JobRecord job;
  job.id = rows.integer(row, 0);
  job.learner_id = rows.integer(row, 1);
  job.stage = rows.text(row, 2);
  job.source = rows.text(row, 3);
  job.state = parse_state(rows.text(row, 4));
  job.phase = rows.text(row, 5);
  job.attempts = static_cast<int>(rows.integer(row, 6));
  job.verdict = rows.optional_text(row, 7);
  job.report_json = rows.optional_text(row, 8);
  job.created_at = rows.real(row, 9);
  job.started_at = rows.optional_real(row, 10);
  job.finished_at = rows.optional_real(row, 11);
  job.language = rows.text(row, 12);
  job.holder = rows.optional_text(row, 13);
  job.lease_until = rows.optional_real(row, 14);
  job.rejudging_id = rows.optional_integer(row, 15);
  job.profile = rows.boolean(row, 16);
  return job;
}

// The columns read_learner reads, in its order.
inline constexpr const char* kLearnerColumns = "id, name, leaderboard, class_id, student_id, email";

inline Learner read_learner(const Rows& rows, int row = 0) {
  return {rows.integer(row, 0), rows.text(row, 1),          rows.boolean(row, 2),
          rows.integer(row, 3), rows.optional_text(row, 4), rows.optional_text(row, 5)};
}

// Thrown by Session when the connection broke on the call's first statement, so the whole call
// can run again on a fresh connection.
struct BrokenBeforeWork {
  std::string reason;
};

}  // namespace postgres_internal

// One pooled connection lent to one call.
class PostgresStore::Session {
 public:
  explicit Session(PGconn* connection) : connection_(connection) {}

  // Runs one statement; throws StoreError (kUnavailable when the database cannot be reached).
  postgres_internal::Rows run(const std::string& sql, const postgres_internal::Params& params = {}) {
    const auto values = params.pointers();
    PGresult* result = PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                    values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    const bool first = statements_++ == 0;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return postgres_internal::Rows(result);
    const std::string message = postgres_internal::first_line(PQresultErrorMessage(result));
    const std::string state =
        PQresultErrorField(result, PG_DIAG_SQLSTATE) ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : "";
    const bool unavailable = postgres_internal::is_unavailable(connection_, result);
    const bool broken = postgres_internal::is_broken(connection_, state);
    PQclear(result);
    // Only a connection found dead is worth a second try at once; a statement that waited its full
    // lock or statement timeout would only wait again.
    if (broken && first) throw postgres_internal::BrokenBeforeWork{message};
    if (unavailable) {
      // A live connection whose statement was cut short waited on a lock or a clock, not the network.
      const bool reached = !broken;
      throw StoreError(StoreErrorCode::kUnavailable,
                       (reached ? "the database could not do it in time (a lock held elsewhere): "
                                : "the database cannot be reached: ") +
                           message);
    }
    // A unique index refused a row a check just found free: another request took the name at the
    // same moment (a check and an insert in different transactions, or two inserts racing).
    if (state == "23505")
      throw StoreError(StoreErrorCode::kNameTaken,
                       "another request took that name or id a moment ago; try another");
    throw StoreError(StoreErrorCode::kInternal, fmt::format("SQL failed: {}", message));
  }

  // Runs statements separated by ';' without parameters (a migration step).
  void script(const char* sql) {
    PGresult* result = PQexec(connection_, sql);
    ++statements_;
    const ExecStatusType status = PQresultStatus(result);
    const std::string message = postgres_internal::first_line(PQresultErrorMessage(result));
    const bool unavailable =
        status != PGRES_COMMAND_OK && postgres_internal::is_unavailable(connection_, result);
    PQclear(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return;
    throw StoreError(unavailable ? StoreErrorCode::kUnavailable : StoreErrorCode::kInternal,
                     fmt::format("migration failed: {}", message));
  }

  // Runs `work` between BEGIN and COMMIT, rolling back when it throws.
  template <typename Work>
  auto transaction(Work&& work) {
    run("BEGIN");
    try {
      if constexpr (std::is_void_v<decltype(work())>) {
        work();
        run("COMMIT");
      } else {
        auto result = work();
        run("COMMIT");
        return result;
      }
    } catch (...) {
      if (PQstatus(connection_) == CONNECTION_OK) PQclear(PQexec(connection_, "ROLLBACK"));
      throw;
    }
  }

 private:
  PGconn* connection_;
  int statements_ = 0;
};

namespace postgres_internal {

// The audit entry of a change, written inside the change's own transaction.
inline void insert_audit(PostgresStore::Session& session, const AuditNote& note) {
  session.run(
      "INSERT INTO audit (at, actor_kind, actor_id, actor_name, class_id, action, detail)"
      " VALUES (" CUDOJO_NOW ", $1, $2, $3, $4, $5, $6)",
      Params()
          .add(note.actor.kind)
          .add(note.actor.id)
          .add(note.actor.name)
          .add(note.class_id)
          .add(note.action)
          .add(note.detail));
}

}  // namespace postgres_internal

template <typename Work>
auto PostgresStore::with_session(Work&& work) {
  for (int round = 0;; ++round) {
    PGconn* connection = nullptr;
    {
      std::unique_lock lock(pool_mutex_);
      pool_returned_.wait(lock, [this] { return !idle_.empty() || lent_ < max_connections_; });
      ++lent_;
      if (!idle_.empty()) {
        connection = idle_.back();
        idle_.pop_back();
      }
    }
    // Returns the connection to the pool, or closes it when it broke.
    auto give_back = [this](PGconn* used) {
      std::lock_guard lock(pool_mutex_);
      --lent_;
      if (used && PQstatus(used) == CONNECTION_OK && PQtransactionStatus(used) == PQTRANS_IDLE) {
        idle_.push_back(used);
      } else if (used) {
        PQfinish(used);
      }
      pool_returned_.notify_one();
    };
    try {
      if (!connection) connection = connect();
      Session session(connection);
      if constexpr (std::is_void_v<decltype(work(session))>) {
        work(session);
        give_back(connection);
        return;
      } else {
        auto result = work(session);
        give_back(connection);
        return result;
      }
    } catch (const postgres_internal::BrokenBeforeWork& broken) {
      give_back(connection);
      // The idle connections went to the same server, and look alive until used: after a restart
      // every one of them is dead. Close them all, so the second try connects afresh.
      {
        std::lock_guard lock(pool_mutex_);
        for (PGconn* idle : idle_) PQfinish(idle);
        idle_.clear();
      }
      if (round == 1) {
        throw StoreError(StoreErrorCode::kUnavailable,
                         fmt::format("the database cannot be reached: {}", broken.reason));
      }
    } catch (...) {
      give_back(connection);
      throw;
    }
  }
}

}  // namespace cudojo

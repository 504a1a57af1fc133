#include "serve/postgres_store.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <cstdlib>
#include <regex>

#include "serve/store_internal.h"

namespace cudojo {

namespace {

// The database server's clock in seconds since the epoch: every node reads time from one place.
#define CUDOJO_NOW "EXTRACT(EPOCH FROM clock_timestamp())::float8"

// Advisory lock keys (any 64-bit numbers no other program on the database uses).
constexpr std::int64_t kSchemaLock = 0x6375646f6a6f01;  // "cudojo" + 1: migrations
constexpr std::int64_t kQueueLock = 0x6375646f6a6f02;   // enqueue's count-then-insert
// The channel a job's arrival in the queue is announced on (delivered when its transaction commits).
#define CUDOJO_NEW_JOBS_CHANNEL "cudojo_new_jobs"
#define CUDOJO_ANNOUNCE_NEW_JOBS "SELECT pg_notify('" CUDOJO_NEW_JOBS_CHANNEL "', '')"

// The schema, one step per version; a database at version N runs steps N+1.. at open, in one
// transaction. Steps are never edited once released: a change is a new step.
const std::vector<const char*> kMigrations = {
    // 1: learners, jobs with leases, the nodes that serve and judge, and the reader of numbers in a
    // stored report (NULL for a report that is absent, not JSON, or lacks the number, as SQLite's
    // json_valid guard gives).
    "CREATE TABLE learners (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE,"
    " token_sha256 TEXT NOT NULL UNIQUE, created_at DOUBLE PRECISION NOT NULL,"
    " leaderboard BOOLEAN NOT NULL DEFAULT false, last_served_at DOUBLE PRECISION);"
    "CREATE TABLE jobs (id BIGSERIAL PRIMARY KEY, learner_id BIGINT NOT NULL REFERENCES learners(id),"
    " stage TEXT NOT NULL, source TEXT NOT NULL, language TEXT NOT NULL DEFAULT 'cuda',"
    " state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),"
    " phase TEXT NOT NULL DEFAULT 'queued', attempts INTEGER NOT NULL DEFAULT 0, verdict TEXT, report TEXT,"
    " created_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION,"
    " holder TEXT, lease_until DOUBLE PRECISION);"
    "CREATE INDEX jobs_by_state ON jobs (state, id);"
    "CREATE INDEX jobs_by_learner ON jobs (learner_id, stage, id);"
    "CREATE TABLE nodes (name TEXT PRIMARY KEY, host TEXT NOT NULL, gpu TEXT NOT NULL,"
    " workers INTEGER NOT NULL, http BOOLEAN NOT NULL, started_at DOUBLE PRECISION NOT NULL,"
    " last_seen DOUBLE PRECISION NOT NULL);"
    "CREATE FUNCTION cudojo_report_number(report TEXT, path TEXT[]) RETURNS DOUBLE PRECISION"
    " LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN (report::jsonb #>> path)::float8;"
    " EXCEPTION WHEN others THEN RETURN NULL; END $$;",
    // 2: a submission's Idempotency-Key, unique per learner.
    "ALTER TABLE jobs ADD COLUMN client_key TEXT;"
    "CREATE UNIQUE INDEX jobs_by_client_key ON jobs (learner_id, client_key) WHERE client_key IS NOT NULL;",
};

// Whether a failed call is worth trying again shortly, rather than the SQL or the data being wrong:
// a broken connection; SQLSTATE class 08 (connection exception) or 57P0x (the server shutting
// down or starting); or a wait that was cut short (55P03 lock_timeout, 57014 statement_timeout,
// 40001 serialization, 40P01 deadlock), as when a cut-off node's backend still holds a row.
bool is_unavailable(PGconn* connection, const PGresult* result) {
  if (PQstatus(connection) != CONNECTION_OK) return true;
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (!state) return true;  // no SQLSTATE: libpq lost the server before it answered
  const std::string_view code = state;
  return code.starts_with("08") || code.starts_with("57P") || code == "55P03" || code == "57014" ||
         code == "40001" || code == "40P01" || code == "25006" || code.starts_with("53") || code == "58030";
}

// Whether the connection itself is gone (as opposed to a statement refused on a live one).
bool is_broken(PGconn* connection, const std::string& code) {
  return PQstatus(connection) != CONNECTION_OK || code.empty() || code.starts_with("08") ||
         code.starts_with("57P");
}

std::string first_line(const char* message) {
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
std::string job_columns(std::string_view table) {
  std::string columns;
  for (const char* column :
       {"id", "learner_id", "stage", "source", "state", "phase", "attempts", "verdict", "report",
        "created_at", "started_at", "finished_at", "language", "holder", "lease_until"}) {
    if (!columns.empty()) columns += ", ";
    columns += fmt::format("{}.{}", table, column);
  }
  return columns;
}

JobState parse_state(const std::string& text) {
  if (text == "running") return JobState::kRunning;
  if (text == "done") return JobState::kDone;
  return JobState::kQueued;
}

JobRecord read_job(const Rows& rows, int row) {
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
  return job;
}

Learner read_learner(const Rows& rows) { return {rows.integer(0, 0), rows.text(0, 1), rows.boolean(0, 2)}; }

// SQL for numbers in a job's stored report.
#define CUDOJO_REPORT_NUMBER(path) "cudojo_report_number(report, '{" path "}')"
// The ratio the gate judged by: the baseline's when the stage has one, else the reference's.
constexpr const char* kGateRatio = "COALESCE(" CUDOJO_REPORT_NUMBER(
    "metrics,baseline_ratio") ", " CUDOJO_REPORT_NUMBER("metrics,time_ratio") ")";
constexpr const char* kTimeRatio = CUDOJO_REPORT_NUMBER("metrics,time_ratio");
constexpr const char* kBaselineRatio = CUDOJO_REPORT_NUMBER("metrics,baseline_ratio");
constexpr const char* kMedianMs = CUDOJO_REPORT_NUMBER("metrics,time_ms,median");
#undef CUDOJO_REPORT_NUMBER

// Thrown by Session when the connection broke on the call's first statement, so the whole call
// can run again on a fresh connection.
struct BrokenBeforeWork {
  std::string reason;
};

}  // namespace

// One pooled connection lent to one call.
class PostgresStore::Session {
 public:
  explicit Session(PGconn* connection) : connection_(connection) {}

  // Runs one statement; throws StoreError (kUnavailable when the database cannot be reached).
  Rows run(const std::string& sql, const Params& params = {}) {
    const auto values = params.pointers();
    PGresult* result = PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                    values.data(), nullptr, nullptr, 0);
    const ExecStatusType status = PQresultStatus(result);
    const bool first = statements_++ == 0;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return Rows(result);
    const std::string message = first_line(PQresultErrorMessage(result));
    const std::string state =
        PQresultErrorField(result, PG_DIAG_SQLSTATE) ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : "";
    const bool unavailable = is_unavailable(connection_, result);
    const bool broken = is_broken(connection_, state);
    PQclear(result);
    // Only a connection found dead is worth a second try at once; a statement that waited its full
    // lock or statement timeout would only wait again.
    if (broken && first) throw BrokenBeforeWork{message};
    if (unavailable) {
      // A live connection whose statement was cut short waited on a lock or a clock, not the network.
      const bool reached = !broken;
      throw StoreError(StoreErrorCode::kUnavailable,
                       (reached ? "the database could not do it in time (a lock held elsewhere): "
                                : "the database cannot be reached: ") +
                           message);
    }
    throw StoreError(StoreErrorCode::kInternal, fmt::format("SQL failed: {}", message));
  }

  // Runs statements separated by ';' without parameters (a migration step).
  void script(const char* sql) {
    PGresult* result = PQexec(connection_, sql);
    ++statements_;
    const ExecStatusType status = PQresultStatus(result);
    const std::string message = first_line(PQresultErrorMessage(result));
    const bool unavailable = status != PGRES_COMMAND_OK && is_unavailable(connection_, result);
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
      auto result = work();
      run("COMMIT");
      return result;
    } catch (...) {
      if (PQstatus(connection_) == CONNECTION_OK) PQclear(PQexec(connection_, "ROLLBACK"));
      throw;
    }
  }

 private:
  PGconn* connection_;
  int statements_ = 0;
};

std::string redact_postgres_url(const std::string& url) {
  static const std::regex kPassword(R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)");
  std::string redacted = std::regex_replace(url, kPassword, "$1:***@");
  static const std::regex kPasswordParam(R"(([?&]password=)[^&]*)");
  return std::regex_replace(redacted, kPasswordParam, "$1***");
}

PostgresStore::PostgresStore(const std::string& url, int max_connections)
    : url_(url), printable_url_(redact_postgres_url(url)), max_connections_(std::max(1, max_connections)) {
  migrate();
}

PostgresStore::~PostgresStore() {
  stop_watching();
  for (PGconn* connection : idle_) PQfinish(connection);
}

void PostgresStore::watch_new_jobs(std::function<void()> on_new_jobs) {
  stop_watching();
  stop_watching_ = false;
  watcher_ = std::thread([this, on_new_jobs = std::move(on_new_jobs)] {
    PGconn* listener = nullptr;
    while (!stop_watching_) {
      if (!listener) {
        try {
          listener = connect();
          PGresult* listening = PQexec(listener, "LISTEN " CUDOJO_NEW_JOBS_CHANNEL);
          const bool ok = PQresultStatus(listening) == PGRES_COMMAND_OK;
          PQclear(listening);
          if (!ok) throw StoreError(StoreErrorCode::kUnavailable, "LISTEN failed");
          on_new_jobs();  // jobs may have arrived while nobody listened
        } catch (const StoreError&) {
          PQfinish(listener);
          listener = nullptr;
          // The database is away; the dispatchers' own polls go on meanwhile.
          for (int waited_ms = 0; waited_ms < 1000 && !stop_watching_; waited_ms += 100)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          continue;
        }
      }
      // Wait on the connection's socket, waking every 200 ms to see whether to stop.
      pollfd socket{PQsocket(listener), POLLIN, 0};
      const int ready = poll(&socket, 1, 200);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      if (PQconsumeInput(listener) == 0 || PQstatus(listener) != CONNECTION_OK) {
        PQfinish(listener);
        listener = nullptr;
        continue;
      }
      bool heard = false;
      while (PGnotify* notice = PQnotifies(listener)) {
        heard = true;
        PQfreemem(notice);
      }
      if (heard) on_new_jobs();
    }
    PQfinish(listener);
  });
}

void PostgresStore::stop_watching() {
  stop_watching_ = true;
  if (watcher_.joinable()) watcher_.join();
}

PGconn* PostgresStore::connect() {
  // A host cut off mid-query is noticed within tcp_user_timeout, not TCP's minutes; a connection
  // attempt gives up after connect_timeout.
  //
  // The server side needs bounds too. A node cut off in the middle of a transaction leaves its
  // backend holding row locks until the server notices: keep-alives from the server find a silent
  // client within about 11 s, and a backend left idle inside a transaction is ended after 15 s, so
  // the locks go and the job's lease can be swept. No statement of ours waits on a lock for more
  // than 10 s or runs for more than 30 s.
  // Our settings come before the URL, so any the URL names itself win; `options` comes after it,
  // holding ours and then the URL's own (or $PGOPTIONS), so a later `-c` of theirs wins too.
  std::string their_options;
  if (PQconninfoOption* parsed = PQconninfoParse(url_.c_str(), nullptr)) {
    for (PQconninfoOption* option = parsed; option->keyword; ++option) {
      if (std::string_view(option->keyword) == "options" && option->val) their_options = option->val;
    }
    PQconninfoFree(parsed);
  }
  if (their_options.empty()) {
    if (const char* environment = std::getenv("PGOPTIONS")) their_options = environment;
  }
  const std::string options =
      "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3"
      " -c idle_in_transaction_session_timeout=15000 -c lock_timeout=10000 -c statement_timeout=30000 " +
      their_options;
  const char* keywords[] = {"connect_timeout",
                            "tcp_user_timeout",
                            "keepalives_idle",
                            "keepalives_interval",
                            "keepalives_count",
                            "application_name",
                            "dbname",
                            "options",
                            nullptr};
  const char* values[] = {"5", "10000", "5", "2", "3", "cudojo", url_.c_str(), options.c_str(), nullptr};
  PGconn* connection = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (!connection || PQstatus(connection) != CONNECTION_OK) {
    const std::string message = connection ? first_line(PQerrorMessage(connection)) : "out of memory";
    PQfinish(connection);
    throw StoreError(StoreErrorCode::kUnavailable,
                     fmt::format("cannot connect to {}: {}", printable_url_, message));
  }
  // Notices (such as "relation already exists, skipping") are not for the server's log.
  PQsetNoticeProcessor(
      connection, [](void*, const char*) {}, nullptr);
  return connection;
}

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
    } catch (const BrokenBeforeWork& broken) {
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

void PostgresStore::migrate() {
  with_session([](Session& session) {
    session.transaction([&] {
      session.run(fmt::format("SELECT pg_advisory_xact_lock({})", kSchemaLock));
      session.run("CREATE TABLE IF NOT EXISTS cudojo_schema (version INTEGER NOT NULL)");
      Rows current = session.run("SELECT version FROM cudojo_schema");
      const std::int64_t version = current.empty() ? 0 : current.integer(0, 0);
      const auto known = static_cast<std::int64_t>(kMigrations.size());
      if (version > known) {
        throw StoreError(StoreErrorCode::kInternal,
                         fmt::format("the database's schema is version {}, newer than this cudojo's {}; "
                                     "run the newer cudojo",
                                     version, known));
      }
      for (std::int64_t step = version; step < known; ++step) session.script(kMigrations[step]);
      if (current.empty()) {
        session.run("INSERT INTO cudojo_schema (version) VALUES ($1)", Params().add(known));
      } else if (version < known) {
        session.run("UPDATE cudojo_schema SET version = $1", Params().add(known));
      }
      return 0;
    });
  });
}

std::optional<std::string> PostgresStore::problem() {
  try {
    with_session([](Session& session) { session.run("SELECT 1"); });
  } catch (const StoreError& error) {
    return fmt::format("the database does not answer: {}", error.what());
  }
  return std::nullopt;
}

IssuedLearner PostgresStore::create_learner(const std::string& requested) {
  const std::string name = store_internal::checked_learner_name(requested);
  IssuedLearner issued;
  issued.token = store_internal::random_token();
  const std::string digest = token_digest(issued.token);
  return with_session([&](Session& session) {
    Rows inserted = session.transaction([&] {
      // A taken name is the caller's conflict, found before anything is written; ON CONFLICT covers
      // two nodes inserting the same new name at once.
      if (!session.run("SELECT 1 FROM learners WHERE name = $1", Params().add(name)).empty())
        throw StoreError(StoreErrorCode::kNameTaken, fmt::format("the name '{}' is taken", name));
      return session.run("INSERT INTO learners (name, token_sha256, created_at) VALUES ($1, $2, " CUDOJO_NOW
                         ") ON CONFLICT (name) DO NOTHING RETURNING id, name, leaderboard",
                         Params().add(name).add(digest));
    });
    if (inserted.empty())
      throw StoreError(StoreErrorCode::kNameTaken, fmt::format("the name '{}' is taken", name));
    issued.learner = read_learner(inserted);
    return issued;
  });
}

std::optional<Learner> PostgresStore::find_learner_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  const std::string digest = token_digest(token);
  return with_session([&](Session& session) -> std::optional<Learner> {
    Rows found = session.run("SELECT id, name, leaderboard FROM learners WHERE token_sha256 = $1",
                             Params().add(digest));
    if (found.empty()) return std::nullopt;
    return read_learner(found);
  });
}

std::optional<Learner> PostgresStore::set_leaderboard(std::int64_t learner_id, bool leaderboard) {
  return with_session([&](Session& session) -> std::optional<Learner> {
    Rows updated = session.transaction([&] {
      return session.run("UPDATE learners SET leaderboard = $1 WHERE id = $2 RETURNING id, name, leaderboard",
                         Params().add(leaderboard).add(learner_id));
    });
    if (updated.empty()) return std::nullopt;
    return read_learner(updated);
  });
}

Enqueued PostgresStore::submit(const Submission& submission, const QueueLimits& limits) {
  return with_session([&](Session& session) {
    return session.transaction([&]() -> Enqueued {
      // Every node's submit waits here for the one before it to commit, so the key lookup and the
      // counts below see every job queued before this one.
      session.run(fmt::format("SELECT pg_advisory_xact_lock({})", kQueueLock));
      if (!submission.client_key.empty()) {
        Rows seen = session.run(
            "SELECT id, stage = $3 AND source = $4 AND language = $5 FROM jobs"
            " WHERE learner_id = $1 AND client_key = $2",
            Params()
                .add(submission.learner_id)
                .add(submission.client_key)
                .add(submission.stage)
                .add(submission.source)
                .add(submission.language));
        if (!seen.empty()) {
          if (!seen.boolean(0, 1)) {
            throw StoreError(StoreErrorCode::kKeyReused,
                             fmt::format("this Idempotency-Key was used for job {}, a different submission",
                                         seen.integer(0, 0)));
          }
          return {seen.integer(0, 0), true};
        }
      }
      Rows counts = session.run(
          "SELECT COUNT(*), COUNT(*) FILTER (WHERE learner_id = $1) FROM jobs WHERE state <> 'done'",
          Params().add(submission.learner_id));
      if (counts.integer(0, 0) >= limits.max_queue_length) {
        throw StoreError(StoreErrorCode::kQueueFull, "the queue is full; try again shortly");
      }
      if (counts.integer(0, 1) >= limits.max_pending_per_learner) {
        throw StoreError(
            StoreErrorCode::kLearnerBusy,
            fmt::format("you already have {} jobs waiting or running", limits.max_pending_per_learner));
      }
      Rows inserted = session.run(
          "INSERT INTO jobs (learner_id, stage, source, state, created_at, language, client_key)"
          " VALUES ($1, $2, $3, 'queued', " CUDOJO_NOW ", $4, NULLIF($5, '')) RETURNING id",
          Params()
              .add(submission.learner_id)
              .add(submission.stage)
              .add(submission.source)
              .add(submission.language)
              .add(submission.client_key));
      session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      return {inserted.integer(0, 0), false};
    });
  });
}

std::int64_t PostgresStore::pending_count() {
  return with_session([](Session& session) {
    return session.run("SELECT COUNT(*) FROM jobs WHERE state <> 'done'").integer(0, 0);
  });
}

std::int64_t PostgresStore::queued_count() {
  return with_session([](Session& session) {
    return session.run("SELECT COUNT(*) FROM jobs WHERE state = 'queued'").integer(0, 0);
  });
}

std::int64_t PostgresStore::pending_count(std::int64_t learner_id) {
  return with_session([&](Session& session) {
    return session
        .run("SELECT COUNT(*) FROM jobs WHERE state <> 'done' AND learner_id = $1", Params().add(learner_id))
        .integer(0, 0);
  });
}

std::int64_t PostgresStore::queue_position(std::int64_t job_id) {
  return with_session([&](Session& session) {
    return session
        .run(
            "SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND id < $1"
            " AND EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND state = 'queued')",
            Params().add(job_id))
        .integer(0, 0);
  });
}

std::optional<JobRecord> PostgresStore::claim_next(const std::string& holder, double lease_seconds) {
  return with_session([&](Session& session) {
    return session.transaction([&]() -> std::optional<JobRecord> {
      // The round robin's pick, skipping rows another dispatcher has locked this instant: each
      // concurrent claim takes a different job and none waits.
      Rows claimed = session.run(
          fmt::format("WITH next AS (SELECT j.id FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
                      " WHERE j.state = 'queued' ORDER BY COALESCE(l.last_served_at, 0), j.id"
                      " LIMIT 1 FOR UPDATE OF j SKIP LOCKED)"
                      " UPDATE jobs SET state = 'running', phase = 'starting', attempts = jobs.attempts + 1,"
                      " started_at = " CUDOJO_NOW ", holder = $1, lease_until = " CUDOJO_NOW " + $2"
                      " FROM next WHERE jobs.id = next.id RETURNING {}",
                      job_columns("jobs")),
          Params().add(holder).add(lease_seconds));
      if (claimed.empty()) return std::nullopt;
      JobRecord job = read_job(claimed, 0);
      session.run("UPDATE learners SET last_served_at = $1 WHERE id = $2",
                  Params().add(job.started_at.value_or(0)).add(job.learner_id));
      return job;
    });
  });
}

// The claim's condition over $1 (id), $2 (holder) and $3 (attempt).
#define CUDOJO_CURRENT_CLAIM " id = $1 AND state = 'running' AND holder = $2 AND attempts = $3"

namespace {
Params claim_params(const JobClaim& claim) {
  return Params().add(claim.id).add(claim.holder).add(claim.attempt);
}
}  // namespace

int PostgresStore::renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) {
  if (claims.empty()) return 0;
  return with_session([&](Session& session) {
    return session.transaction([&] {
      int renewed = 0;
      for (const JobClaim& claim : claims) {
        renewed += session
                       .run("UPDATE jobs SET lease_until = " CUDOJO_NOW " + $4 WHERE" CUDOJO_CURRENT_CLAIM,
                            claim_params(claim).add(lease_seconds))
                       .affected();
      }
      return renewed;
    });
  });
}

bool PostgresStore::set_phase(const JobClaim& claim, const std::string& phase) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      return session
                 .run("UPDATE jobs SET phase = $4 WHERE" CUDOJO_CURRENT_CLAIM, claim_params(claim).add(phase))
                 .affected() == 1;
    });
  });
}

bool PostgresStore::finish(const JobClaim& claim, const std::string& verdict,
                           const std::string& report_json) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      if (session
              .run("UPDATE jobs SET state = 'done', phase = 'done', verdict = $4, report = $5, finished_at "
                   "= " CUDOJO_NOW ", lease_until = NULL WHERE" CUDOJO_CURRENT_CLAIM,
                   claim_params(claim).add(verdict).add(report_json))
              .affected() == 1) {
        return true;
      }
      // Already recorded under this very claim: an earlier call committed but its answer was lost
      // with the connection, and the caller asked again.
      return !session
                  .run(
                      "SELECT 1 FROM jobs WHERE id = $1 AND state = 'done' AND holder = $2 AND attempts = $3"
                      " AND verdict = $4",
                      claim_params(claim).add(verdict))
                  .empty();
    });
  });
}

bool PostgresStore::requeue(const JobClaim& claim, const std::string& phase) {
  return with_session([&](Session& session) {
    return session.transaction([&] {
      const bool requeued = session
                                .run(
                                    "UPDATE jobs SET state = 'queued', phase = $4, holder = NULL,"
                                    " lease_until = NULL WHERE" CUDOJO_CURRENT_CLAIM,
                                    claim_params(claim).add(phase))
                                .affected() == 1;
      if (requeued) session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      return requeued;
    });
  });
}
#undef CUDOJO_CURRENT_CLAIM

int PostgresStore::requeue_expired() {
  const std::string gave_up = gave_up_report_json();
  return with_session([&](Session& session) {
    return session.transaction([&] {
      // Rows another transaction holds are skipped, not waited for: a second node sweeping at the
      // same moment, or a cut-off node's backend still holding its locks (the server ends it within
      // seconds, and a later sweep takes the job).
      const int failed =
          session
              .run("WITH lapsed AS (SELECT id FROM jobs WHERE state = 'running' AND lease_until < " CUDOJO_NOW
                   " AND attempts >= $2 FOR UPDATE SKIP LOCKED)"
                   " UPDATE jobs SET state = 'done', phase = 'done', verdict = 'internal_error', report = $1,"
                   " finished_at = " CUDOJO_NOW ", lease_until = NULL FROM lapsed WHERE jobs.id = lapsed.id",
                   Params().add(gave_up).add(kMaxAttempts))
              .affected();
      const int requeued =
          session
              .run("WITH lapsed AS (SELECT id FROM jobs WHERE state = 'running' AND lease_until < " CUDOJO_NOW
                   " AND attempts < $1 FOR UPDATE SKIP LOCKED)"
                   " UPDATE jobs SET state = 'queued', phase = 'queued again: its judge stopped answering',"
                   " holder = NULL, lease_until = NULL FROM lapsed WHERE jobs.id = lapsed.id",
                   Params().add(kMaxAttempts))
              .affected();
      if (requeued > 0) session.run(CUDOJO_ANNOUNCE_NEW_JOBS);
      return failed + requeued;
    });
  });
}

std::optional<JobRecord> PostgresStore::job(std::int64_t job_id) {
  return with_session([&](Session& session) -> std::optional<JobRecord> {
    Rows found = session.run(fmt::format("SELECT {} FROM jobs WHERE id = $1", job_columns("jobs")),
                             Params().add(job_id));
    if (found.empty()) return std::nullopt;
    return read_job(found, 0);
  });
}

std::vector<JobSummary> PostgresStore::history(std::int64_t learner_id,
                                               const std::optional<std::string>& stage, int limit,
                                               std::optional<std::int64_t> before) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        fmt::format("SELECT id, stage, language, state, verdict, {}, {}, created_at, finished_at"
                    " FROM jobs WHERE learner_id = $1 AND ($2::text IS NULL OR stage = $2) AND id < $3"
                    " ORDER BY id DESC LIMIT $4",
                    kTimeRatio, kBaselineRatio),
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
    // As SqliteStore::progress: finished jobs with their numbers read once; each stage's accepted
    // jobs ranked, the first being its best. Stage ids sort bytewise ("C"), as SQLite does.
    Rows rows = session.run(
        fmt::format("WITH finished AS (SELECT id, stage, verdict, {} AS ratio, {} AS ms FROM jobs"
                    "  WHERE learner_id = $1 AND state = 'done'),"
                    " best AS (SELECT stage, ratio, ms, ROW_NUMBER() OVER (PARTITION BY stage"
                    "  ORDER BY ratio IS NULL, ratio, ms IS NULL, ms, id) AS place"
                    "  FROM finished WHERE verdict = 'accepted')"
                    " SELECT f.stage, COUNT(*), bool_or(f.verdict = 'accepted'), b.ratio, b.ms, MAX(f.id)"
                    " FROM finished AS f LEFT JOIN best AS b ON b.stage = f.stage AND b.place = 1"
                    " GROUP BY f.stage, b.ratio, b.ms ORDER BY f.stage COLLATE \"C\"",
                    kGateRatio, kMedianMs),
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

std::vector<LeaderboardEntry> PostgresStore::leaderboard(const std::string& stage, int limit) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        fmt::format("WITH accepted AS (SELECT j.id, j.learner_id, j.language, j.finished_at,"
                    "  {} AS ratio, {} AS ms FROM jobs AS j JOIN learners AS l ON l.id = j.learner_id"
                    "  WHERE j.stage = $1 AND j.state = 'done' AND j.verdict = 'accepted' AND l.leaderboard),"
                    " ranked AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY learner_id ORDER BY ratio, id)"
                    "  AS place FROM accepted WHERE ratio IS NOT NULL)"
                    " SELECT l.name, r.ratio, r.ms, r.language, COALESCE(r.finished_at, 0)"
                    " FROM ranked AS r JOIN learners AS l ON l.id = r.learner_id"
                    " WHERE r.place = 1 ORDER BY r.ratio, r.id LIMIT $2",
                    kGateRatio, kMedianMs),
        Params().add(stage).add(std::int64_t{limit}));
    std::vector<LeaderboardEntry> entries;
    for (int row = 0; row < rows.size(); ++row) {
      entries.push_back({rows.text(row, 0), rows.real(row, 1), rows.optional_real(row, 2), rows.text(row, 3),
                         rows.real(row, 4)});
    }
    return entries;
  });
}

void PostgresStore::register_node(const NodeInfo& node) {
  with_session([&](Session& session) {
    session.transaction([&] {
      session.run(
          "INSERT INTO nodes (name, host, gpu, workers, http, started_at, last_seen)"
          " VALUES ($1, $2, $3, $4, $5, " CUDOJO_NOW ", " CUDOJO_NOW
          ") ON CONFLICT (name) DO UPDATE SET"
          " host = excluded.host, gpu = excluded.gpu, workers = excluded.workers, http = excluded.http,"
          " last_seen = excluded.last_seen",
          Params().add(node.name).add(node.host).add(node.gpu).add(node.workers).add(node.http));
      return 0;
    });
  });
}

std::vector<NodeInfo> PostgresStore::nodes(double seen_within_seconds) {
  return with_session([&](Session& session) {
    Rows rows = session.run(
        "SELECT name, host, gpu, workers, http, started_at, last_seen FROM nodes"
        " WHERE last_seen >= " CUDOJO_NOW " - $1 ORDER BY name",
        Params().add(seen_within_seconds));
    std::vector<NodeInfo> nodes;
    for (int row = 0; row < rows.size(); ++row) {
      nodes.push_back({rows.text(row, 0), rows.text(row, 1), rows.text(row, 2),
                       static_cast<int>(rows.integer(row, 3)), rows.boolean(row, 4), rows.real(row, 5),
                       rows.real(row, 6)});
    }
    return nodes;
  });
}

#undef CUDOJO_NOW

}  // namespace cudojo

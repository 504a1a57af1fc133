// PostgresStore's connections and the rows beside the jobs: the pool and its connections' settings,
// the schema's migrations, the watcher that hears of new jobs, learners and nodes. The jobs' queue is
// in postgres_jobs.cc, the queries over finished jobs in postgres_queries.cc.
#include "serve/postgres_store.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <cstdlib>
#include <regex>

#include "serve/postgres_session.h"
#include "serve/store_internal.h"

namespace cudojo {

using postgres_internal::first_line;
using postgres_internal::kSchemaLock;
using postgres_internal::Params;
using postgres_internal::read_learner;
using postgres_internal::Rows;

namespace {

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
    // 3: the address a submission came from, over which each address's share of the queue is
    // counted (NULL for older jobs). No index: submit counts it in the scan of pending jobs it makes
    // anyway.
    "ALTER TABLE jobs ADD COLUMN client_address TEXT;",
    // 4: classes. Every learner so far joined by open sign-up: they land in the default class (made
    // here, with a random invite code), keep token and history, and count as signed in. Names become
    // unique within a class; staff, their roles, deadlines, drafts and the audit log; and each
    // finished job's gate figures in columns, read from its report once.
    "CREATE TABLE classes (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL, invite_code TEXT NOT NULL UNIQUE,"
    " is_default BOOLEAN NOT NULL DEFAULT false, joining_open BOOLEAN NOT NULL DEFAULT true,"
    " created_at DOUBLE PRECISION NOT NULL);"
    "CREATE UNIQUE INDEX classes_one_default ON classes (is_default) WHERE is_default;"
    "INSERT INTO classes (name, invite_code, is_default, created_at) VALUES ('" CUDOJO_DEFAULT_CLASS_NAME
    "',"
    " upper(substr(replace(gen_random_uuid()::text, '-', ''), 1, 10)), true,"
    " EXTRACT(EPOCH FROM clock_timestamp())::float8);"
    "ALTER TABLE learners ADD COLUMN class_id BIGINT REFERENCES classes(id),"
    " ADD COLUMN student_id TEXT, ADD COLUMN email TEXT, ADD COLUMN signed_in_at DOUBLE PRECISION,"
    " ADD COLUMN removed_at DOUBLE PRECISION,"
    " ADD COLUMN origin TEXT NOT NULL DEFAULT 'open' CHECK (origin IN ('open', 'invite', 'roster'));"
    "UPDATE learners SET class_id = (SELECT id FROM classes WHERE is_default), signed_in_at = created_at;"
    "ALTER TABLE learners ALTER COLUMN class_id SET NOT NULL, DROP CONSTRAINT learners_name_key,"
    " ADD CONSTRAINT learners_student_in_class UNIQUE (class_id, student_id);"
    // A removed learner's name is free for someone else (a roster's real owner of a name a joiner took).
    "CREATE UNIQUE INDEX learners_active_name ON learners (class_id, name) WHERE removed_at IS NULL;"
    "CREATE INDEX learners_by_class ON learners (class_id, created_at);"
    "CREATE TABLE staff (id BIGSERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE, token_sha256 TEXT NOT NULL "
    "UNIQUE,"
    " admin BOOLEAN NOT NULL DEFAULT false, created_at DOUBLE PRECISION NOT NULL);"
    "CREATE TABLE class_staff (class_id BIGINT NOT NULL REFERENCES classes(id),"
    " staff_id BIGINT NOT NULL REFERENCES staff(id),"
    " role TEXT NOT NULL CHECK (role IN ('instructor', 'ta')), PRIMARY KEY (class_id, staff_id));"
    "CREATE TABLE deadlines (class_id BIGINT NOT NULL REFERENCES classes(id), stage TEXT NOT NULL,"
    " due_at DOUBLE PRECISION NOT NULL, hide_leaderboard BOOLEAN NOT NULL DEFAULT false,"
    " PRIMARY KEY (class_id, stage));"
    "CREATE TABLE drafts (learner_id BIGINT NOT NULL REFERENCES learners(id), stage TEXT NOT NULL,"
    " language TEXT NOT NULL, source TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (learner_id, stage, language));"
    "CREATE TABLE audit (id BIGSERIAL PRIMARY KEY, at DOUBLE PRECISION NOT NULL, actor_kind TEXT NOT NULL,"
    " actor_id BIGINT NOT NULL, actor_name TEXT NOT NULL, class_id BIGINT, action TEXT NOT NULL,"
    " detail TEXT NOT NULL);"
    "CREATE INDEX audit_by_class ON audit (class_id, id);"
    // The figures are read by a trigger whenever a report is written, by whatever statement.
    "ALTER TABLE jobs ADD COLUMN time_ratio DOUBLE PRECISION, ADD COLUMN baseline_ratio DOUBLE PRECISION,"
    " ADD COLUMN time_ms DOUBLE PRECISION;"
    "CREATE FUNCTION cudojo_gate_figures() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    " NEW.time_ratio := cudojo_report_number(NEW.report, '{metrics,time_ratio}');"
    " NEW.baseline_ratio := cudojo_report_number(NEW.report, '{metrics,baseline_ratio}');"
    " NEW.time_ms := cudojo_report_number(NEW.report, '{metrics,time_ms,median}');"
    " RETURN NEW; END $$;"
    "CREATE TRIGGER jobs_gate_figures BEFORE INSERT OR UPDATE OF report ON jobs"
    " FOR EACH ROW EXECUTE FUNCTION cudojo_gate_figures();"
    "UPDATE jobs SET report = report WHERE report IS NOT NULL;",
    // 5: rejudgings (serve/store_rejudging.h) and each job's stage version, read from its report by
    // a trigger, as the figures are.
    "CREATE TABLE rejudgings (id BIGSERIAL PRIMARY KEY, class_id BIGINT REFERENCES classes(id),"
    " created_at DOUBLE PRECISION NOT NULL, actor_kind TEXT NOT NULL, actor_id BIGINT NOT NULL,"
    " actor_name TEXT NOT NULL, filter TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',"
    " state TEXT NOT NULL DEFAULT 'judging' CHECK (state IN ('judging', 'applied', 'cancelled')),"
    " ended_at DOUBLE PRECISION);"
    "ALTER TABLE jobs ADD COLUMN rejudging_id BIGINT REFERENCES rejudgings(id),"
    " ADD COLUMN rejudges_job BIGINT REFERENCES jobs(id), ADD COLUMN stage_version TEXT;"
    "CREATE INDEX jobs_by_rejudging ON jobs (rejudging_id) WHERE rejudging_id IS NOT NULL;"
    "CREATE FUNCTION cudojo_stage_version() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    " BEGIN NEW.stage_version := NEW.report::jsonb #>> '{stage_version,digest}';"
    " EXCEPTION WHEN others THEN NEW.stage_version := NULL; END;"
    " RETURN NEW; END $$;"
    "CREATE TRIGGER jobs_stage_version BEFORE INSERT OR UPDATE OF report ON jobs"
    " FOR EACH ROW EXECUTE FUNCTION cudojo_stage_version();"
    // No report before this step names a version: nothing to read back, so no rewrite of the table.
    "CREATE INDEX jobs_by_rejudged ON jobs (rejudges_job) WHERE rejudges_job IS NOT NULL;",
    // 6: links to one job (serve/store_shares.h), one row per job ever shared, as SQLite's step 8.
    "CREATE TABLE job_shares (job_id BIGINT PRIMARY KEY REFERENCES jobs(id),"
    " learner_id BIGINT NOT NULL REFERENCES learners(id), token_sha256 TEXT NOT NULL UNIQUE,"
    " created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION);"
    "CREATE INDEX job_shares_live ON job_shares (learner_id) WHERE revoked_at IS NULL;",
    // 7: a profile asked for (issue #28) and the Nsight Compute report a profiled job kept, as
    // SQLite's step 9 (job_id NULL only while an applied rejudging swaps two jobs' reports).
    "ALTER TABLE jobs ADD COLUMN profile BOOLEAN NOT NULL DEFAULT FALSE;"
    "CREATE TABLE ncu_reports (id BIGSERIAL PRIMARY KEY,"
    " job_id BIGINT UNIQUE REFERENCES jobs(id) ON DELETE CASCADE, bytes BIGINT NOT NULL,"
    " report BYTEA NOT NULL, kept_at DOUBLE PRECISION NOT NULL);",
    // 8: an instructor's switch for links to jobs, and who of the staff stopped a link, as SQLite's
    // step 10.
    "ALTER TABLE classes ADD COLUMN sharing_open BOOLEAN NOT NULL DEFAULT true;"
    "ALTER TABLE job_shares ADD COLUMN stopped_by TEXT;",
};

}  // namespace

const std::vector<const char*>& postgres_migrations() { return kMigrations; }

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

IssuedLearner PostgresStore::add_learner(const NewLearner& wanted) {
  const std::string name = store_internal::checked_learner_name(wanted.name);
  IssuedLearner issued;
  issued.token = store_internal::random_token();
  const std::string digest = token_digest(issued.token);
  return with_session([&](Session& session) {
    Rows inserted = session.transaction([&] {
      const std::int64_t class_id =
          wanted.class_id != 0 ? wanted.class_id
                               : session.run("SELECT id FROM classes WHERE is_default").integer(0, 0);
      // The class's row locked, its learners counted: no join from any node overtakes the count.
      session.run("SELECT 1 FROM classes WHERE id = $1 FOR UPDATE", Params().add(class_id));
      Rows counts = session.run(
          "SELECT COUNT(*) FILTER (WHERE removed_at IS NULL),"
          " COUNT(*) FILTER (WHERE origin = 'invite' AND created_at >= " CUDOJO_NOW
          " - 3600),"
          " COUNT(*) FILTER (WHERE removed_at IS NULL AND name = $2) FROM learners WHERE class_id = $1",
          Params().add(class_id).add(name));
      store_internal::check_new_learner(wanted, name, counts.integer(0, 0), counts.integer(0, 1),
                                        counts.integer(0, 2) > 0);
      return session.run(
          fmt::format("INSERT INTO learners (class_id, name, token_sha256, created_at, signed_in_at,"
                      " email, origin) VALUES ($1, $2, $3, " CUDOJO_NOW ", " CUDOJO_NOW
                      ", NULLIF($4, ''), $5) RETURNING {}",
                      postgres_internal::kLearnerColumns),
          Params()
              .add(class_id)
              .add(name)
              .add(digest)
              .add(wanted.email)
              .add(std::string(to_string(wanted.origin))));
    });
    issued.learner = read_learner(inserted);
    return issued;
  });
}

std::optional<Learner> PostgresStore::find_learner_by_token(const std::string& token) {
  if (token.empty() || token.size() > 200) return std::nullopt;
  const std::string digest = token_digest(token);
  return with_session([&](Session& session) -> std::optional<Learner> {
    Rows found = session.run(fmt::format("SELECT {}, signed_in_at IS NULL FROM learners"
                                         " WHERE token_sha256 = $1 AND removed_at IS NULL",
                                         postgres_internal::kLearnerColumns),
                             Params().add(digest));
    if (found.empty()) return std::nullopt;
    if (found.boolean(0, 6)) {
      // The first use of a token handed out for a roster: the learner has it now.
      session.run("UPDATE learners SET signed_in_at = " CUDOJO_NOW " WHERE id = $1 AND signed_in_at IS NULL",
                  Params().add(found.integer(0, 0)));
    }
    return read_learner(found);
  });
}

std::optional<Learner> PostgresStore::set_leaderboard(std::int64_t learner_id, bool leaderboard) {
  return with_session([&](Session& session) -> std::optional<Learner> {
    Rows updated = session.transaction([&] {
      return session.run(fmt::format("UPDATE learners SET leaderboard = $1 WHERE id = $2 RETURNING {}",
                                     postgres_internal::kLearnerColumns),
                         Params().add(leaderboard).add(learner_id));
    });
    if (updated.empty()) return std::nullopt;
    return read_learner(updated);
  });
}

std::optional<std::string> PostgresStore::learner_token_digest(std::int64_t learner_id) {
  return with_session([&](Session& session) -> std::optional<std::string> {
    Rows found = session.run("SELECT token_sha256 FROM learners WHERE id = $1 AND removed_at IS NULL",
                             Params().add(learner_id));
    if (found.empty()) return std::nullopt;
    return found.text(0, 0);
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

}  // namespace cudojo

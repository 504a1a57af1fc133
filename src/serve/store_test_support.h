// For tests only (the store tests and the API tests): the test PostgreSQL server, fresh databases on
// it, and real faults and rows in a store's database (a SQLite file or a PostgreSQL database), made
// from a second connection the way another process could, so tests need no stand-in database.
#pragma once

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace cudojo::testing {

inline constexpr const char* kNoPostgresReason =
    "no PostgreSQL server for tests: ctest starts one (fixture postgres, tests/postgres/cluster.sh); "
    "or set CUDOJO_TEST_POSTGRES=postgresql://...";

// The test server's URL: $CUDOJO_TEST_POSTGRES, else the URL in the file $CUDOJO_TEST_POSTGRES_FILE
// names (written by the ctest fixture); nullopt when neither is set or readable.
inline std::optional<std::string> postgres_test_server() {
  if (const char* url = std::getenv("CUDOJO_TEST_POSTGRES"); url && *url) return url;
  const char* file = std::getenv("CUDOJO_TEST_POSTGRES_FILE");
  if (!file || !*file) return std::nullopt;
  std::ifstream in(file);
  std::string url;
  if (!std::getline(in, url) || url.empty()) return std::nullopt;
  return url;
}

// `url` naming database `name` instead of its own.
inline std::string with_database(const std::string& url, const std::string& name) {
  const auto query = url.find('?');
  const std::string base = url.substr(0, query);
  const std::string options = query == std::string::npos ? "" : url.substr(query);
  const auto slash = base.rfind('/');
  return base.substr(0, slash + 1) + name + options;
}

// Runs `sql` on the database at `location` (a SQLite path or a PostgreSQL URL); the first column of
// the first row, "" when there is none, or "error: ..." when it failed.
inline std::string sql_value(const std::string& location, const std::string& sql) {
  if (location.starts_with("postgres")) {
    PGconn* connection = PQconnectdb(location.c_str());
    std::string value = "error: cannot connect";
    if (PQstatus(connection) == CONNECTION_OK) {
      PQsetNoticeProcessor(
          connection, [](void*, const char*) {}, nullptr);
      PGresult* result = PQexec(connection, sql.c_str());
      const auto status = PQresultStatus(result);
      if (status == PGRES_TUPLES_OK) {
        value = PQntuples(result) > 0 ? PQgetvalue(result, 0, 0) : "";
      } else if (status == PGRES_COMMAND_OK) {
        value = "";
      } else {
        value = std::string("error: ") + PQresultErrorMessage(result);
      }
      PQclear(result);
    }
    PQfinish(connection);
    return value;
  }
  sqlite3* other = nullptr;
  std::string value = "error: cannot open";
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_open(location.c_str(), &other) == SQLITE_OK) {
    sqlite3_busy_timeout(other, 5000);
    if (sqlite3_prepare_v2(other, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK) {
      const int status = sqlite3_step(statement);
      if (status == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
        value = text ? text : "";
      } else {
        value = status == SQLITE_DONE ? "" : std::string("error: ") + sqlite3_errmsg(other);
      }
    } else {
      value = std::string("error: ") + sqlite3_errmsg(other);
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(other);
  return value;
}

// A new, empty database on the test server; its URL, or "" when it could not be made.
inline std::string create_postgres_database(const std::string& server) {
  static std::atomic<int> made{0};
  const std::string name = "cudojo_test_" + std::to_string(getpid()) + "_" + std::to_string(made++);
  sql_value(server, "DROP DATABASE IF EXISTS " + name);
  if (sql_value(server, "CREATE DATABASE " + name).starts_with("error")) return "";
  return with_database(server, name);
}

inline void drop_postgres_database(const std::string& url) {
  const auto query = url.find('?');
  const std::string base = url.substr(0, query);
  const std::string name = base.substr(base.rfind('/') + 1);
  sql_value(with_database(url, "postgres"), "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
}

// Makes every new learner fail inside the database (a trigger that aborts the INSERT), as a full
// disk would; the Store's own connection sees it at its next statement. False when it could not.
inline bool refuse_new_learners(const std::string& location) {
  if (location.starts_with("postgres")) {
    return !sql_value(location,
                      "CREATE FUNCTION refuse_learners() RETURNS trigger LANGUAGE plpgsql AS"
                      " $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;"
                      "CREATE TRIGGER refuse_learners BEFORE INSERT ON learners"
                      " FOR EACH ROW EXECUTE FUNCTION refuse_learners()")
                .starts_with("error");
  }
  return !sql_value(location,
                    "CREATE TRIGGER refuse_learners BEFORE INSERT ON learners"
                    " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
              .starts_with("error");
}

// Writes a finished job for a learner straight into the jobs table, as a GPU machine's judge would
// have left it, so tests without a GPU can hold accepted jobs. Returns its id, or 0 on failure.
inline std::int64_t insert_finished_job(const std::string& location, std::int64_t learner_id,
                                        const std::string& stage, const std::string& verdict,
                                        const std::string& report_json,
                                        const std::string& language = "cuda") {
  // Values are the test's own (no quotes in them but the report's, doubled here).
  auto quoted = [](const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  };
  const std::string now =
      location.starts_with("postgres") ? "EXTRACT(EPOCH FROM clock_timestamp())::float8" : "unixepoch()";
  const std::string id =
      sql_value(location,
                "INSERT INTO jobs (learner_id, stage, source, state, phase, attempts, verdict, report,"
                " created_at, started_at, finished_at, language) VALUES (" +
                    std::to_string(learner_id) + ", " + quoted(stage) + ", 'source', 'done', 'done', 1, " +
                    quoted(verdict) + ", " + quoted(report_json) + ", " + now + ", " + now + ", " + now +
                    ", " + quoted(language) + ") RETURNING id");
  return id.empty() || id.starts_with("error") ? 0 : std::stoll(id);
}

// Queues `count` jobs for a learner straight into the jobs table in one statement, as many
// submissions would, so a test of many jobs does not wait for as many commits. False on failure.
inline bool insert_queued_jobs(const std::string& location, std::int64_t learner_id, int count) {
  const std::string values = std::to_string(learner_id) + ", 'reduction/2', 'source', 'queued', 0 FROM ";
  const std::string sql =
      location.starts_with("postgres")
          ? "INSERT INTO jobs (learner_id, stage, source, state, created_at) SELECT " + values +
                "generate_series(1, " + std::to_string(count) + ")"
          : "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
                std::to_string(count) +
                ") INSERT INTO jobs (learner_id, stage, source, state, created_at) SELECT " + values + "n";
  return !sql_value(location, sql).starts_with("error");
}

}  // namespace cudojo::testing

// For tests only (store_test.cc and the API tests): real faults in a Store's SQLite file, made
// from a second connection the way another process could, so tests need no stand-in database.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace cudojo::testing {

// Makes every new learner fail inside SQLite (a trigger that aborts the INSERT), as a full disk
// would; the Store's own connection sees it at its next statement. False when it could not.
inline bool refuse_new_learners(const std::filesystem::path& database) {
  sqlite3* other = nullptr;
  const bool opened = sqlite3_open(database.c_str(), &other) == SQLITE_OK;
  const bool created = opened && sqlite3_exec(other,
                                              "CREATE TRIGGER refuse_learners BEFORE INSERT ON learners"
                                              " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
                                              nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(other);
  return created;
}

// Writes a finished job for a learner straight into the jobs table, as a GPU machine's judge would
// have left it, so tests without a GPU can hold accepted jobs. Returns its id, or 0 on failure.
inline std::int64_t insert_finished_job(const std::filesystem::path& database, std::int64_t learner_id,
                                        const std::string& stage, const std::string& verdict,
                                        const std::string& report_json,
                                        const std::string& language = "cuda") {
  sqlite3* other = nullptr;
  std::int64_t id = 0;
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_open(database.c_str(), &other) == SQLITE_OK &&
      sqlite3_prepare_v2(
          other,
          "INSERT INTO jobs (learner_id, stage, source, state, phase, attempts, verdict, report,"
          " created_at, started_at, finished_at, language) VALUES (?, ?, 'source', 'done', 'done',"
          " 1, ?, ?, unixepoch(), unixepoch(), unixepoch(), ?)",
          -1, &insert, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(other, 5000);
    sqlite3_bind_int64(insert, 1, learner_id);
    sqlite3_bind_text(insert, 2, stage.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 3, verdict.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 4, report_json.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 5, language.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(insert) == SQLITE_DONE) id = sqlite3_last_insert_rowid(other);
  }
  sqlite3_finalize(insert);
  sqlite3_close(other);
  return id;
}

}  // namespace cudojo::testing

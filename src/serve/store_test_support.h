// For tests only (store_test.cc and the API tests): real faults in a Store's SQLite file, made
// from a second connection the way another process could, so tests need no stand-in database.
#pragma once

#include <sqlite3.h>

#include <filesystem>

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

}  // namespace cudojo::testing

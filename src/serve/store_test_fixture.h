// For the store tests only (store_*_test.cc, sqlite_store_test.cc, postgres_store_test.cc): one
// store per test on a database of its own, and the three suites they share. StoreTest runs every
// behaviour both stores promise against each (instantiated once, in store_learners_test.cc);
// SqliteStoreTest and PostgresStoreTest hold what only one of them has.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "serve/store.h"
#include "serve/store_test_support.h"

namespace cudojo {

// Failure messages name the code rather than its bytes (found by ADL).
inline void PrintTo(StoreErrorCode code, std::ostream* out) {
  switch (code) {
    case StoreErrorCode::kInvalidName:
      *out << "kInvalidName";
      return;
    case StoreErrorCode::kNameTaken:
      *out << "kNameTaken";
      return;
    case StoreErrorCode::kConflict:
      *out << "kConflict";
      return;
    case StoreErrorCode::kTooManyJoins:
      *out << "kTooManyJoins";
      return;
    case StoreErrorCode::kNotAllowed:
      *out << "kNotAllowed";
      return;
    case StoreErrorCode::kInternal:
      *out << "kInternal";
      return;
    case StoreErrorCode::kUnavailable:
      *out << "kUnavailable";
      return;
    case StoreErrorCode::kQueueFull:
      *out << "kQueueFull";
      return;
    case StoreErrorCode::kLearnerBusy:
      *out << "kLearnerBusy";
      return;
    case StoreErrorCode::kAddressBusy:
      *out << "kAddressBusy";
      return;
    case StoreErrorCode::kKeyReused:
      *out << "kKeyReused";
      return;
    default:
      *out << static_cast<int>(code);
      return;
  }
}

namespace store_test {

namespace fs = std::filesystem;

inline constexpr const char* kNode = "node-a#1";
inline constexpr double kLease = 30;
// A lease that has run out by the time anyone looks: the job it covers is back for the taking.
inline constexpr double kLapsedLease = 0;

// Finishes a new job of `learner` with `verdict` and a report whose metrics hold the given ratios
// and median time (absent when negative); returns its id.
inline std::int64_t finished_job(Store& store, std::int64_t learner, const std::string& stage,
                                 const std::string& verdict, double time_ratio, double baseline_ratio = -1,
                                 double median_ms = -1, const std::string& language = "cuda") {
  const auto id = store.enqueue(learner, stage, "source", {}, language);
  auto claimed = store.claim_next(kNode, kLease);
  EXPECT_TRUE(claimed && claimed->id == id);
  nlohmann::json metrics = nlohmann::json::object();
  if (time_ratio >= 0) metrics["time_ratio"] = time_ratio;
  if (baseline_ratio >= 0) metrics["baseline_ratio"] = baseline_ratio;
  if (median_ms >= 0) metrics["time_ms"] = {{"median", median_ms}, {"min", median_ms}};
  EXPECT_TRUE(store.finish(claimed->claim(), verdict,
                           nlohmann::json{{"verdict", verdict}, {"metrics", metrics}}.dump()));
  return id;
}

// One store per test, on a database of its own: a SQLite file in a fresh folder, or a fresh
// PostgreSQL database on the test cluster (ctest starts one; tests/postgres/cluster.sh).
class StoreFixture : public ::testing::Test {
 protected:
  virtual std::string kind() const = 0;
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (kind() == "postgresql") {
      auto server = testing::postgres_test_server();
      if (!server) GTEST_SKIP() << testing::kNoPostgresReason;
      database_ = testing::create_postgres_database(*server);
      ASSERT_FALSE(database_.empty()) << "could not create a database on " << *server;
      location_ = database_;
      return;
    }
    std::string folder = "cudojo_store_test_" + std::to_string(getpid()) + "_" + test;
    std::replace(folder.begin(), folder.end(), '/', '_');
    path_ = fs::temp_directory_path() / folder;
    fs::remove_all(path_);
    location_ = file().string();
  }
  void TearDown() override {
    store_.reset();
    others_.clear();
    if (!database_.empty()) testing::drop_postgres_database(database_);
    if (!path_.empty()) fs::remove_all(path_);
  }
  fs::path file() const { return path_ / "cudojo.sqlite3"; }
  // The test's store, opened anew (closing the one before, as a server restart does).
  Store& reopen() {
    store_.reset();
    store_ = open_store(location_);
    return *store_;
  }
  // A second store on the same database, as another node has.
  Store& another() {
    others_.push_back(open_store(location_));
    return *others_.back();
  }
  // The code of the StoreError that `action` throws; nullopt when it throws none.
  template <typename Action>
  static std::optional<StoreErrorCode> error_code(Action action) {
    try {
      action();
    } catch (const StoreError& error) {
      return error.code();
    }
    return std::nullopt;
  }
  // The database holds `token` as its digest in one row of `table`'s token_sha256, and never the token
  // itself (a SQLite file: nowhere in its bytes).
  void expect_only_digest_stored(const std::string& table, const std::string& token) const {
    const std::string count = "SELECT COUNT(*) FROM " + table + " WHERE token_sha256 = '";
    EXPECT_EQ(testing::sql_value(location_, count + token + "'"), "0") << table;
    EXPECT_EQ(testing::sql_value(location_, count + token_digest(token) + "'"), "1") << table;
    if (kind() == "sqlite") {
      std::ifstream in(file(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      EXPECT_EQ(bytes.find(token), std::string::npos) << table;
    }
  }
  // After a migration that added jobs.client_address: the job stored before it is still there,
  // and the per-address cap now holds for new jobs.
  static void expect_address_cap_after_migration(Store& migrated, std::int64_t learner,
                                                 std::int64_t old_job) {
    EXPECT_EQ(migrated.job(old_job)->source, "kept");
    QueueLimits one_each;
    one_each.max_pending_per_address = 1;
    EXPECT_FALSE(
        migrated.submit({learner, "reduction/3", "new", "cuda", "", "192.0.2.1"}, one_each).replayed);
    EXPECT_EQ(error_code([&] {
                migrated.submit({learner, "reduction/3", "new", "cuda", "", "192.0.2.1"}, one_each);
              }),
              StoreErrorCode::kAddressBusy);
  }
  // After the migration that brought classes: the learner stored before it (`token` being theirs)
  // is in the default class, signs in with the same token and keeps their finished job, whose gate
  // figures were read out of its report; names are now unique within a class, not the server.
  static void expect_classes_after_migration(Store& migrated, const std::string& token, std::int64_t learner,
                                             std::int64_t finished_job) {
    const auto found = migrated.find_learner_by_token(token);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->id, learner);
    const ClassInfo everyone = migrated.classes().default_class();
    EXPECT_EQ(everyone.name, kDefaultClassName);
    EXPECT_EQ(everyone.invite_code.size(), 10u);
    EXPECT_EQ(found->class_id, everyone.id);
    EXPECT_EQ(migrated.job(finished_job)->verdict, "accepted");
    const auto progress = migrated.progress(learner);
    ASSERT_EQ(progress.size(), 1u);
    EXPECT_EQ(progress[0].best_time_ratio, 0.75);
    const auto roster = migrated.classes().roster(everyone.id);
    ASSERT_EQ(roster.size(), 1u);
    EXPECT_TRUE(roster[0].signed_in_at.has_value());  // they hold their token: nothing to hand out
    EXPECT_EQ(error_code([&] { migrated.create_learner(found->name); }), StoreErrorCode::kNameTaken);
    const Actor console{"console", 0, "test"};
    const ClassInfo other =
        migrated.classes().create_class("Another class", {console, std::nullopt, "class.create", ""});
    NewLearner same_name;
    same_name.name = found->name;
    same_name.class_id = other.id;
    EXPECT_EQ(migrated.add_learner(same_name).learner.class_id, other.id);
  }
  fs::path path_;
  std::string database_;
  std::string location_;
  std::unique_ptr<Store> store_;
  std::vector<std::unique_ptr<Store>> others_;
};

// Every behaviour both stores promise, run against each.
class StoreTest : public StoreFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string kind() const override { return GetParam(); }
};

// What only a SQLite file has: the file, its lock, its migrations from older releases.
class SqliteStoreTest : public StoreFixture {
 protected:
  std::string kind() const override { return "sqlite"; }
};

// What only the shared database has: its schema table and its connections.
class PostgresStoreTest : public StoreFixture {
 protected:
  std::string kind() const override { return "postgresql"; }
};

}  // namespace store_test
}  // namespace cudojo

// The Store in one SQLite file, owned by one `cudojo serve` (which locks its data folder): the
// embedded default, needing no database server. WAL journal, synchronous writes, one connection
// behind a mutex (a single server's load is a handful of writes a second). Schema versions are
// SQLite's user_version, migrated in place at open.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <mutex>

#include "serve/store.h"

struct sqlite3;

namespace cudojo {

class SqliteStore final : public Store {
 public:
  // busy_timeout_ms: how long a call waits for another connection's write lock (see ServeLimits).
  explicit SqliteStore(const std::filesystem::path& file,
                       int busy_timeout_ms = ServeLimits{}.database_busy_timeout_ms);
  ~SqliteStore() override;

  std::string_view kind() const override { return "sqlite"; }
  std::string location() const override { return file_.string(); }

  IssuedLearner create_learner(const std::string& name) override;
  std::optional<Learner> find_learner_by_token(const std::string& token) override;
  std::optional<Learner> set_leaderboard(std::int64_t learner_id, bool leaderboard) override;
  std::optional<std::string> learner_token_digest(std::int64_t learner_id) override;

  Enqueued submit(const Submission& submission, const QueueLimits& limits) override;
  std::int64_t pending_count() override;
  std::int64_t queued_count() override;
  std::int64_t pending_count(std::int64_t learner_id) override;
  std::int64_t queue_position(std::int64_t job_id) override;

  std::optional<JobRecord> claim_next(const std::string& holder, double lease_seconds) override;
  int renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) override;
  bool set_phase(const JobClaim& claim, const std::string& phase) override;
  bool finish(const JobClaim& claim, const std::string& verdict, const std::string& report_json) override;
  bool requeue(const JobClaim& claim, const std::string& phase) override;
  int requeue_expired() override;
  int requeue_interrupted() override;

  std::optional<JobRecord> job(std::int64_t job_id) override;
  std::vector<JobProgress> job_progress(const std::vector<std::int64_t>& job_ids) override;
  std::vector<JobSummary> history(std::int64_t learner_id, const std::optional<std::string>& stage, int limit,
                                  std::optional<std::int64_t> before) override;
  std::vector<StageProgress> progress(std::int64_t learner_id) override;
  std::vector<LeaderboardEntry> leaderboard(const std::string& stage, int limit) override;

  void register_node(const NodeInfo& node) override;
  std::vector<NodeInfo> nodes(double seen_within_seconds) override;

  std::optional<std::string> problem() override;

 private:
  void execute(const char* sql);
  void migrate();
  // Requeues running jobs matching `where` (SQL over jobs), failing those started too often.
  int take_back_running(const char* where, const std::string& phase);
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
  std::filesystem::path file_;
  ino_t inode_ = 0;
};

}  // namespace cudojo

// The server's durable state, in one SQLite file: learners (a name, the SHA-256 of the token the
// server issued, tokens themselves never being stored, and whether they opted in to leaderboards)
// and jobs (source, state, progress, report). History, progress and leaderboards are queries over
// jobs that read only the numbers they need out of the stored reports (SQLite's json_extract).
//
// Job states: queued -> running -> done. A job is written before the POST that created it
// returns. At start-up, jobs left `running` by a server that stopped are put back to `queued`, so
// none is lost; `finish` only moves a job that is `running`, so none completes twice. A job that
// has been interrupted kMaxAttempts times is finished with internal_error instead of looping.
//
// Thread-safe: one connection behind a mutex (the server's load is a handful of writes a second).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/limits.h"

struct sqlite3;

namespace cudojo {

// Why the Store refused or failed. Code decides on the code (the server's HTTP status, one
// function in serve/api.cc); the message is for people and is never searched.
enum class StoreErrorCode {
  // A learner name that is not 1 to 40 characters of letters, digits, '_', '.', '-' and single
  // spaces between words (after trimming): the caller's mistake.
  kInvalidName,
  // Another learner has the name: the caller's request is well formed but conflicts.
  kNameTaken,
  // SQLite or OpenSSL failed (open, prepare, step, randomness, digest), or the database file is
  // corrupt or gone: the server's fault, answered 503 with a reason.
  kInternal,
  // The queue holds its limit of jobs (queued + running): try again shortly.
  kQueueFull,
  // This learner already has its limit of jobs queued or running.
  kLearnerBusy,
};

// Limits enqueue checks in the same transaction as its insert, so no burst of submissions can pass
// them together (counting first and inserting after let 5 in under a limit of 4).
struct QueueLimits {
  std::int64_t max_queue_length = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_pending_per_learner = std::numeric_limits<std::int64_t>::max();
};

class StoreError : public std::runtime_error {
 public:
  StoreError(StoreErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  StoreErrorCode code() const { return code_; }

 private:
  StoreErrorCode code_;
};

struct Learner {
  std::int64_t id = 0;
  std::string name;
  bool leaderboard = false;  // opted in to the stages' leaderboards (off until the learner says so)
};

struct IssuedLearner {
  Learner learner;
  std::string token;  // shown once, to the learner
};

enum class JobState { kQueued, kRunning, kDone };
std::string_view to_string(JobState state);

// One line of a learner's history: what a list shows, without the source or the report (a report
// can be over 100 KB). The ratios are read from the stored report's metrics; nullopt when absent.
struct JobSummary {
  std::int64_t id = 0;
  std::string stage;
  std::string language;
  JobState state = JobState::kQueued;
  std::optional<std::string> verdict;
  std::optional<double> time_ratio;
  std::optional<double> baseline_ratio;
  double created_at = 0;
  std::optional<double> finished_at;
};

// A learner's standing on one stage they have tried, from their finished jobs. `best_*` come from
// their best accepted job (lowest gate ratio); nullopt when none was accepted or it was not timed.
struct StageProgress {
  std::string stage;
  bool accepted = false;      // some finished job's verdict was "accepted"
  std::int64_t attempts = 0;  // finished jobs on this stage
  std::optional<double> best_time_ratio;
  std::optional<double> best_time_ms;
  std::int64_t last_job = 0;  // the newest finished job
};

// One learner's line on a stage's leaderboard: their best accepted job by the gate's ratio.
struct LeaderboardEntry {
  std::string name;
  double time_ratio = 0;
  std::optional<double> time_ms;
  std::string language;
  double at = 0;  // when that job finished, seconds since the epoch
};

struct JobRecord {
  std::int64_t id = 0;
  std::int64_t learner_id = 0;
  std::string stage;
  std::string source;
  std::string language = "cuda";
  JobState state = JobState::kQueued;
  std::string phase;  // last progress reported ("queued", "compiled", "tests", ...)
  int attempts = 0;
  std::optional<std::string> verdict;
  std::optional<std::string> report_json;
  double created_at = 0;  // seconds since the epoch
  std::optional<double> started_at;
  std::optional<double> finished_at;
};

class Store {
 public:
  static constexpr int kMaxAttempts = ServeLimits{}.max_job_attempts;

  // busy_timeout_ms: how long a call waits for another connection's write lock (see ServeLimits).
  explicit Store(const std::filesystem::path& file,
                 int busy_timeout_ms = ServeLimits{}.database_busy_timeout_ms);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Throws StoreError with kInvalidName when the name is malformed, kNameTaken when it is taken.
  // Leading and trailing spaces are trimmed; the learner returned carries the stored name.
  IssuedLearner create_learner(const std::string& name);
  std::optional<Learner> find_learner_by_token(const std::string& token);
  // Opts a learner in to or out of the leaderboards; the learner as stored after, nullopt if unknown.
  std::optional<Learner> set_leaderboard(std::int64_t learner_id, bool leaderboard);

  // Throws StoreError with kQueueFull or kLearnerBusy when a limit is reached.
  // `language`: cuda, python or rust (checked by the caller).
  std::int64_t enqueue(std::int64_t learner_id, const std::string& stage, const std::string& source,
                       const QueueLimits& limits = {}, const std::string& language = "cuda");
  // A running job back to the queue (its run was cut short by the server stopping); false when it
  // was not running.
  bool requeue(std::int64_t job_id, const std::string& phase);
  std::int64_t pending_count();                         // queued + running, everyone's
  std::int64_t queued_count();                          // waiting for a worker, everyone's
  std::int64_t pending_count(std::int64_t learner_id);  // queued + running, one learner's
  // How many queued jobs are ahead of this one (0 when it is next or no longer queued).
  std::int64_t queue_position(std::int64_t job_id);

  // Takes the oldest queued job and marks it running; nullopt when the queue is empty.
  std::optional<JobRecord> claim_next();
  void set_phase(std::int64_t job_id, const std::string& phase);
  // Records the result; false when the job was not running (already finished, or unknown).
  bool finish(std::int64_t job_id, const std::string& verdict, const std::string& report_json);
  // Start-up recovery: running jobs go back to the queue (or fail after kMaxAttempts).
  int requeue_interrupted();

  std::optional<JobRecord> job(std::int64_t job_id);
  // A learner's jobs, newest first; stage filter optional; only ids below `before` when given (the
  // paging cursor); at most `limit`.
  std::vector<JobSummary> history(std::int64_t learner_id, const std::optional<std::string>& stage, int limit,
                                  std::optional<std::int64_t> before = std::nullopt);
  // The learner's standing on every stage they have a finished job on, ordered by stage id.
  std::vector<StageProgress> progress(std::int64_t learner_id);
  // The best accepted job of each opted-in learner on `stage`, by the ratio the gate used (the
  // report's metrics.baseline_ratio when present, else metrics.time_ratio), ascending; at most
  // `limit`. Jobs without either ratio are not ranked.
  std::vector<LeaderboardEntry> leaderboard(const std::string& stage, int limit);

  // Whether the database can still be trusted: its file is the one opened (not deleted or
  // replaced under the server) and answers a query. nullopt when healthy, else the reason.
  std::optional<std::string> problem();

 private:
  void execute(const char* sql);
  void migrate();
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
  std::filesystem::path file_;
  ino_t inode_ = 0;
};

// SHA-256 of a token, as lowercase hex.
std::string token_digest(const std::string& token);

}  // namespace cudojo

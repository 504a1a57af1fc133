// The server's durable state behind one interface, with two implementations chosen by the store's
// location (open_store): SQLite, one file owned by one server (serve/sqlite_store.h), and
// PostgreSQL, one database shared by any number of servers and GPU hosts (serve/postgres_store.h).
// Both hold learners (a name, the SHA-256 of the token the server issued, tokens themselves never
// being stored, their class, and whether they opted in to leaderboards), jobs (source, state,
// progress, report, and the gate's figures read out of the report when it is recorded), the nodes
// that serve or judge them, and the classes of serve/store_classes.h. History, progress, grids and
// leaderboards are queries over those figures, never over whole reports.
//
// Job states: queued -> running -> done. A job is written before the POST that created it
// returns. Claiming a job makes the caller its holder for a lease, which the holder renews while
// it judges; a job whose lease ran out (its judge died or lost the database) goes back to the
// queue, and after kMaxAttempts starts it is finished with internal_error instead of looping.
// `finish` only moves a job that is running under the caller's claim (same holder, same
// attempt), so a job is recorded once even when a judge presumed dead comes back.
//
// Every call is thread-safe. Failures throw StoreError.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "serve/store_classes.h"

namespace cudojo {

// Why the Store refused or failed. Code decides on the code (the server's HTTP status, one
// function in serve/api.cc); the message is for people and is never searched.
enum class StoreErrorCode {
  // A name that breaks the rule (store_internal::checked_name): the caller's mistake.
  kInvalidName,
  // Another learner (or member of staff) has the name or student id: the caller's request is well
  // formed but conflicts.
  kNameTaken,
  // The change would break what a class must keep (an instructor; its size) or what an import may
  // do (bring back a removed learner): answered 409 with the reason.
  kConflict,
  // A class's learners joining by invite code reached its hourly cap: answered 429, try later.
  kTooManyJoins,
  // The learner used this submission key before for a different submission (stage, source or
  // language): answered 422, as the Idempotency-Key draft says.
  kKeyReused,
  // The database or OpenSSL failed (open, prepare, step, randomness, digest), or the database
  // file is corrupt or gone: the server's fault, answered 503 with a reason.
  kInternal,
  // The queue holds its limit of jobs (queued + running): try again shortly.
  kQueueFull,
  // This learner already has its limit of jobs queued or running.
  kLearnerBusy,
  // The submission's client address already has its share of the queue (queued or running).
  kAddressBusy,
  // The learner's class does not allow it (links turned off): answered 403 with the reason.
  kNotAllowed,
  // The database cannot do it now (a shared store's connection is down, or a lock it needs is held
  // by a node that was cut off): answered 503 with Retry-After and tried again by the caller; the
  // store reconnects on its next call.
  kUnavailable,
};

// Limits enqueue checks in the same transaction as its insert, so no burst of submissions can pass
// them together (counting first and inserting after let 5 in under a limit of 4).
struct QueueLimits {
  std::int64_t max_queue_length = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_pending_per_learner = std::numeric_limits<std::int64_t>::max();
  // Counted over the jobs submitted from the same Submission::client_address (one without an
  // address is not counted).
  std::int64_t max_pending_per_address = std::numeric_limits<std::int64_t>::max();
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
  bool leaderboard = false;  // opted in to their class's leaderboards (off until the learner says so)
  std::int64_t class_id = 0;
  std::optional<std::string> student_id;
  std::optional<std::string> email;
};

// How a learner came to be: open sign-up, a class's invite code, or a roster import. Only a roster
// (or an instructor) gives a student id, so only those rows are matched by a later import, and the
// class's hourly cap counts joins by invite code alone.
enum class LearnerOrigin { kOpenSignUp, kInvite, kRoster };
std::string_view to_string(LearnerOrigin origin);  // "open", "invite", "roster"

// A learner to create: in `class_id` (0: the default class, where open sign-up puts learners), with
// a name unique among the class's learners who are not removed (serve/classroom.h checks the
// address first). The caps are counted in the same transaction as the insert, so no burst of
// requests from any number of nodes passes them together (StoreError kConflict).
struct NewLearner {
  std::string name;
  std::int64_t class_id = 0;
  std::string email;  // empty: none
  LearnerOrigin origin = LearnerOrigin::kOpenSignUp;
  std::int64_t max_invites_per_hour = 0;  // 0: no cap. Learners who joined by invite in the last hour
  std::int64_t max_class_learners = 0;    // 0: no cap. Learners of the class who are not removed
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
  double at = 0;                   // when that job finished, seconds since the epoch
  std::int64_t learner_id = 0;     // never shown: the route marks the caller's own row with it
  std::optional<std::string> gpu;  // the GPU that judged that job (its report's gpu.name)
};

// Who holds a running job, and which start of it: a result is recorded only under the claim that
// is still current.
struct JobClaim {
  std::int64_t id = 0;
  std::string holder;  // the node's name (NodeInfo::name)
  int attempt = 0;     // JobRecord::attempts when it was claimed
};

// One submission to queue. `client_key` (optional, the client's Idempotency-Key) makes it safe to
// send again after an answer was lost: the same learner and key give the job queued the first time.
struct Submission {
  std::int64_t learner_id = 0;
  std::string stage;
  std::string source;
  std::string language = "cuda";  // cuda, python or rust (checked by the caller)
  std::string client_key;         // empty: none
  // The address the request came from (behind a trusted proxy, the one it named): the queue's
  // share per address is counted over it. Empty: unknown (a job queued by a tool, not a client).
  std::string client_address;
  // Profile the kernel once it passes the tests: hot spots per line and an Nsight Compute report
  // (issue #28; seconds of the GPU alone, so only when asked).
  bool profile = false;
};

struct Enqueued {
  std::int64_t id = 0;
  bool replayed = false;  // the key was seen: this is the job queued the first time
};

struct JobRecord {
  std::int64_t id = 0;
  std::int64_t learner_id = 0;
  std::string stage;
  std::string source;
  std::string language = "cuda";
  JobState state = JobState::kQueued;
  std::string phase;  // last progress reported ("queued", "compiled", "tests", ...)
  int attempts = 0;   // how many times a judge started it
  std::optional<std::string> verdict;
  std::optional<std::string> report_json;
  double created_at = 0;  // seconds since the epoch
  std::optional<double> started_at;
  std::optional<double> finished_at;
  std::optional<std::string> holder;  // the node running it (while running)
  std::optional<double> lease_until;  // when its holder's lease ends (while running)
  // Set on a rerun of a rejudging (serve/store_rejudging.h): never shown to a learner as theirs.
  std::optional<std::int64_t> rejudging_id;
  bool profile = false;  // Submission::profile, kept by a rejudging's reruns
  // The size of the Nsight Compute report kept with the job (keep_ncu_report); read by job() only,
  // nullopt elsewhere and when none is kept.
  std::optional<std::int64_t> ncu_report_bytes;

  JobClaim claim() const { return {id, holder.value_or(""), attempts}; }
};

// Where one job stands, as its event stream shows it: what Store::job_progress reads for every
// open stream at once.
struct JobProgress {
  std::int64_t id = 0;
  JobState state = JobState::kQueued;
  std::string phase;
  std::int64_t position = 0;  // queued jobs ahead of it (queue_position's number; 0 unless queued)
};

// One cudojo process that serves pages, judges jobs, or both, as it registered itself.
struct NodeInfo {
  std::string name;  // unique among live nodes: the holder of the jobs it runs
  std::string host;  // the machine's host name
  std::string gpu;   // the GPU model its judges run on ("none" without one)
  int workers = 0;   // jobs it judges at once (0: it only serves HTTP)
  bool http = false;
  double started_at = 0;
  double last_seen = 0;
};

class RejudgeStore;  // serve/store_rejudging.h
class ShareStore;    // serve/store_shares.h

class Store {
 public:
  static constexpr int kMaxAttempts = ServeLimits{}.max_job_attempts;

  Store() = default;
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // "sqlite" or "postgresql".
  virtual std::string_view kind() const = 0;
  // Where the data is, fit to print: a file path, or a URL without its password.
  virtual std::string location() const = 0;

  // Throws StoreError with kInvalidName when the name is malformed, kNameTaken when the class has a
  // learner of that name, kConflict past a cap. Leading and trailing spaces are trimmed; the learner
  // returned carries the stored name. The token is the learner's from now: they count as signed in.
  virtual IssuedLearner add_learner(const NewLearner& learner) = 0;
  // add_learner in the default class, by name alone (open sign-up).
  IssuedLearner create_learner(const std::string& name) {
    NewLearner learner;
    learner.name = name;
    return add_learner(learner);
  }
  // The learner whose token this is, unless they were removed from their class. Its first use is
  // recorded (RosterEntry::signed_in_at).
  virtual std::optional<Learner> find_learner_by_token(const std::string& token) = 0;
  // Opts a learner in to or out of the leaderboards; the learner as stored after, nullopt if unknown.
  virtual std::optional<Learner> set_leaderboard(std::int64_t learner_id, bool leaderboard) = 0;
  // The stored digest of the learner's token (token_digest), nullopt for an unknown learner. It keys
  // the learner's event-stream tickets (serve/stream_ticket.h), so any node checks a ticket, and a
  // ticket dies with the token it was issued under.
  virtual std::optional<std::string> learner_token_digest(std::int64_t learner_id) = 0;

  // Queues a submission. Throws StoreError with kQueueFull, kLearnerBusy or kAddressBusy when a limit
  // is reached (told in that order), kKeyReused when its key named another submission. The key is
  // looked up and the limits counted in the same transaction as the insert, so no burst from any
  // number of servers passes the limits together or queues one key twice. A replayed submission is
  // not counted against them.
  virtual Enqueued submit(const Submission& submission, const QueueLimits& limits = {}) = 0;
  // submit() without a key; the new job's id.
  std::int64_t enqueue(std::int64_t learner_id, const std::string& stage, const std::string& source,
                       const QueueLimits& limits = {}, const std::string& language = "cuda") {
    return submit({learner_id, stage, source, language, "", ""}, limits).id;
  }
  virtual std::int64_t pending_count() = 0;                         // queued + running, everyone's
  virtual std::int64_t pending_count(std::int64_t learner_id) = 0;  // queued + running, one learner's
  // How many queued jobs are ahead of this one (0 when it is next or no longer queued).
  virtual std::int64_t queue_position(std::int64_t job_id) = 0;
  // Takes back `learner_id`'s own job while it is still queued: the row goes, as if never sent
  // (its source stays in the learner's drafts). False when it is not theirs, or a judge has
  // claimed it already: a claim and a withdrawal never both win.
  virtual bool withdraw_queued(std::int64_t job_id, std::int64_t learner_id) = 0;

  // Takes the next queued job for `holder` with a lease of `lease_seconds` and marks it running;
  // nullopt when the queue is empty. Round robin by learner: each learner's oldest job, the
  // learner served least recently first, so one learner's many jobs cannot make the others wait.
  virtual std::optional<JobRecord> claim_next(const std::string& holder, double lease_seconds) = 0;
  // Extends the lease of each job still running under one of `claims` (the jobs a node is judging
  // now, and only those: a job claimed by a call whose answer was lost is nobody's work, so its
  // lease must run out); how many it extended.
  virtual int renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) = 0;
  // Records progress; false when the claim is no longer current.
  virtual bool set_phase(const JobClaim& claim, const std::string& phase) = 0;
  // Records the result; false when the claim is no longer current (the job was taken back after
  // its lease, finished already, or is unknown): the caller's result is then not recorded.
  virtual bool finish(const JobClaim& claim, const std::string& verdict, const std::string& report_json) = 0;
  // A running job back to the queue (its judge is stopping); false when the claim is not current.
  virtual bool requeue(const JobClaim& claim, const std::string& phase) = 0;
  // Running jobs whose lease ran out go back to the queue, or fail once they have been started
  // kMaxAttempts times. Any node may call it at any time; returns how many jobs it moved.
  virtual int requeue_expired() = 0;
  // At a server's start: jobs no live judge can hold. A store one server owns (SQLite) takes back
  // every running job at once; a shared one (PostgreSQL) only those whose lease ran out.
  virtual int requeue_interrupted() = 0;

  virtual std::optional<JobRecord> job(std::int64_t job_id) = 0;
  // A profiled job's Nsight Compute report (an .ncu-rep file's bytes), kept in the database so any
  // node serves it; one per job, replaced by a later one, dropped with its job (a withdrawal, a
  // cancelled rejudging's reruns) and swapped with the verdicts when a rejudging is applied. Kept
  // only under the current claim, before `finish`; false when the claim is not current or the report
  // is empty or over JudgeLimits::max_ncu_report_bytes.
  virtual bool keep_ncu_report(const JobClaim& claim, const std::string& bytes) = 0;
  // The report's bytes; nullopt when the job has none.
  virtual std::optional<std::string> ncu_report(std::int64_t job_id) = 0;
  // The progress of each of `job_ids` that exists (unknown ids are left out; any order), in a fixed
  // number of queries however many ids there are: the event streams read every open stream's job
  // with one call per poll.
  virtual std::vector<JobProgress> job_progress(const std::vector<std::int64_t>& job_ids) = 0;
  // A learner's jobs, newest first; stage filter optional; only ids below `before` when given (the
  // paging cursor); at most `limit`.
  virtual std::vector<JobSummary> history(std::int64_t learner_id, const std::optional<std::string>& stage,
                                          int limit, std::optional<std::int64_t> before = std::nullopt) = 0;
  // The learner's standing on every stage they have a finished job on, ordered by stage id.
  virtual std::vector<StageProgress> progress(std::int64_t learner_id) = 0;
  // The best accepted job of each opted-in learner of the class on `stage`, by the ratio the gate
  // used (the report's metrics.baseline_ratio when present, else metrics.time_ratio), ascending; at
  // most `limit`. Jobs without either ratio are not ranked; removed learners are left out.
  virtual std::vector<LeaderboardEntry> leaderboard(std::int64_t class_id, const std::string& stage,
                                                    int limit) = 0;

  // Registers a node, or refreshes it (its heartbeat): last_seen becomes now.
  virtual void register_node(const NodeInfo& node) = 0;
  // Nodes seen within the last `seen_within_seconds`, by name.
  virtual std::vector<NodeInfo> nodes(double seen_within_seconds) = 0;

  // Classes, staff, rosters, deadlines, drafts and the audit log (serve/store_classes.h), in the same
  // database. Its writes are not watched by WatchedStore: they are rare beside the jobs' and the
  // heartbeat's, which keep /api/health's answer current.
  virtual ClassStore& classes() = 0;
  // Rejudgings (serve/store_rejudging.h), in the same database.
  virtual RejudgeStore& rejudgings() = 0;
  // Links to one job that its learner made to show it (serve/store_shares.h), in the same database.
  virtual ShareStore& shares() = 0;

  // Whether the database can be used now: nullopt when healthy, else the reason (a file deleted or
  // replaced under the server, a connection that does not answer).
  virtual std::optional<std::string> problem() = 0;

  // Calls `on_new_jobs` (from a thread of the store's) soon after any node queues a job, so idle
  // judges start at once instead of at their next poll; until stop_watching(). A store one server
  // owns has no other node to hear from, and ignores it: that server wakes its own judges.
  virtual void watch_new_jobs(std::function<void()> on_new_jobs) { (void)on_new_jobs; }
  virtual void stop_watching() {}
};

// Whether `location` names a PostgreSQL database (a postgresql:// or postgres:// URL).
bool is_postgres_location(std::string_view location);
// Opens the store at `location`: a PostgreSQL URL (libpq's syntax) opens a shared database;
// anything else is a SQLite file, created if absent. Either schema is created or migrated to this
// version's. Throws StoreError.
std::unique_ptr<Store> open_store(const std::string& location,
                                  int busy_timeout_ms = ServeLimits{}.database_busy_timeout_ms,
                                  int postgres_connections = ServeLimits{}.postgres_connections);

// The message a job gets when it was started kMaxAttempts times and never finished.
std::string gave_up_report_json();

// SHA-256 of a token, as lowercase hex.
std::string token_digest(const std::string& token);

}  // namespace cudojo

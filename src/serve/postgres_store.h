// The Store in a PostgreSQL database shared by any number of `cudojo serve` processes on any
// number of machines, with no coordinator of our own: the database is the only shared state.
//
// - Claiming takes a queued row with FOR UPDATE SKIP LOCKED, so concurrent dispatchers on every
//   host get different jobs without waiting on each other.
// - Time in leases and stamps is the database server's clock, so hosts' clocks need not agree.
// - Queue limits are counted and the job inserted under one transaction-scoped advisory lock, so
//   no burst spread over many web nodes passes them together.
// - Connections come from a small pool; one that breaks is dropped and a new one made on the next
//   call. Calls made while the database is unreachable throw StoreError(kUnavailable). A call whose
//   first statement fails on a broken connection is retried once on a fresh one: every write
//   starts with BEGIN, so nothing of it ran.
// - Judges idle on other hosts hear of a new job at once: enqueue NOTIFYs a channel that every
//   judging node LISTENs on (watch_new_jobs); their poll remains as the backstop.
// - The schema is versioned in cudojo_schema and migrated at open under an advisory lock, so nodes
//   starting together migrate once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "serve/store.h"
#include "serve/store_rejudging.h"
#include "serve/store_shares.h"

struct pg_conn;

namespace cudojo {

class PostgresStore final : public Store, public ClassStore, public RejudgeStore, public ShareStore {
 public:
  // `url`: libpq's postgresql://user[:password]@host[:port]/database[?options]. Throws StoreError
  // when the database cannot be reached (kUnavailable) or its schema is newer than this build's.
  explicit PostgresStore(const std::string& url, int max_connections = 8);
  ~PostgresStore() override;

  std::string_view kind() const override { return "postgresql"; }
  std::string location() const override { return printable_url_; }

  IssuedLearner add_learner(const NewLearner& learner) override;
  std::optional<Learner> find_learner_by_token(const std::string& token) override;
  std::optional<Learner> set_leaderboard(std::int64_t learner_id, bool leaderboard) override;
  std::optional<std::string> learner_token_digest(std::int64_t learner_id) override;

  Enqueued submit(const Submission& submission, const QueueLimits& limits) override;
  std::int64_t pending_count() override;
  std::int64_t pending_count(std::int64_t learner_id) override;
  std::int64_t queue_position(std::int64_t job_id) override;
  bool withdraw_queued(std::int64_t job_id, std::int64_t learner_id) override;

  std::optional<JobRecord> claim_next(const std::string& holder, double lease_seconds) override;
  int renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) override;
  bool set_phase(const JobClaim& claim, const std::string& phase) override;
  bool finish(const JobClaim& claim, const std::string& verdict, const std::string& report_json) override;
  bool requeue(const JobClaim& claim, const std::string& phase) override;
  int requeue_expired() override;
  int requeue_interrupted() override { return requeue_expired(); }

  std::optional<JobRecord> job(std::int64_t job_id) override;
  bool keep_ncu_report(const JobClaim& claim, const std::string& bytes) override;
  std::optional<std::string> ncu_report(std::int64_t job_id) override;
  std::vector<JobProgress> job_progress(const std::vector<std::int64_t>& job_ids) override;
  std::vector<JobSummary> history(std::int64_t learner_id, const std::optional<std::string>& stage, int limit,
                                  std::optional<std::int64_t> before) override;
  std::vector<StageProgress> progress(std::int64_t learner_id) override;
  std::vector<LeaderboardEntry> leaderboard(std::int64_t class_id, const std::string& stage,
                                            int limit) override;

  void register_node(const NodeInfo& node) override;
  std::vector<NodeInfo> nodes(double seen_within_seconds) override;

  std::optional<std::string> problem() override;
  ClassStore& classes() override { return *this; }
  RejudgeStore& rejudgings() override { return *this; }
  ShareStore& shares() override { return *this; }

  // ClassStore (postgres_classes.cc).
  ClassInfo create_class(const std::string& name, const AuditNote& note) override;
  std::optional<ClassInfo> find_class(std::int64_t class_id) override;
  std::optional<ClassInfo> find_class_by_invite(const std::string& code) override;
  ClassInfo default_class() override;
  std::vector<ClassInfo> list_classes() override;
  std::optional<ClassInfo> change_class(std::int64_t class_id, const ClassChange& change,
                                        const AuditNote& note) override;
  IssuedStaff create_staff(const std::string& name, bool admin, const AuditNote& note) override;
  std::optional<StaffAccount> find_staff_by_token(const std::string& token) override;
  std::optional<StaffAccount> find_staff(std::int64_t staff_id) override;
  std::optional<StaffAccount> find_staff_by_name(const std::string& name) override;
  std::vector<StaffAccount> list_staff() override;
  std::optional<std::string> reset_staff_token(std::int64_t staff_id, const AuditNote& note) override;
  void set_class_role(std::int64_t class_id, std::int64_t staff_id, ClassRole role,
                      const AuditNote& note) override;
  bool remove_class_role(std::int64_t class_id, std::int64_t staff_id, const AuditNote& note) override;
  std::vector<ClassStaffMember> class_staff(std::int64_t class_id) override;
  std::vector<RosterEntry> roster(std::int64_t class_id) override;
  std::optional<RosterEntry> roster_entry(std::int64_t class_id, std::int64_t learner_id) override;
  RosterImportCounts import_roster(std::int64_t class_id, const std::vector<RosterRow>& rows,
                                   std::int64_t max_class_learners, const AuditNote& note) override;
  std::optional<RosterEntry> change_learner(std::int64_t class_id, std::int64_t learner_id,
                                            const LearnerChange& change, const AuditNote& note) override;
  std::optional<std::string> reset_learner_token(std::int64_t class_id, std::int64_t learner_id,
                                                 const AuditNote& note) override;
  std::vector<IssuedToken> issue_tokens(std::int64_t class_id, bool only_never_signed_in,
                                        const AuditNote& note) override;
  std::vector<Deadline> deadlines(std::int64_t class_id) override;
  void set_deadline(std::int64_t class_id, const Deadline& deadline, const AuditNote& note) override;
  bool clear_deadline(std::int64_t class_id, const std::string& stage, const AuditNote& note) override;
  std::vector<Draft> drafts(std::int64_t learner_id, const std::optional<std::string>& stage) override;
  double save_draft(std::int64_t learner_id, const Draft& draft) override;
  bool delete_draft(std::int64_t learner_id, const std::string& stage, const std::string& language) override;
  std::vector<GridCell> class_grid(std::int64_t class_id) override;
  void record(const AuditNote& note) override;
  std::vector<AuditEntry> audit(std::optional<std::int64_t> class_id, std::optional<std::int64_t> before,
                                int limit) override;

  // RejudgeStore (postgres_rejudging.cc).
  Rejudging create_rejudging(const RejudgeFilter& filter, const std::string& filter_text,
                             const std::string& reason, std::int64_t max_jobs,
                             const AuditNote& note) override;
  std::vector<Rejudging> list_rejudgings(std::optional<std::int64_t> class_id) override;
  std::optional<Rejudging> find_rejudging(std::int64_t rejudging_id) override;
  std::vector<RejudgeItem> rejudging_items(std::int64_t rejudging_id) override;
  std::optional<Rejudging> apply_rejudging(std::int64_t rejudging_id, const AuditNote& note) override;
  std::optional<Rejudging> cancel_rejudging(std::int64_t rejudging_id, const AuditNote& note) override;
  std::vector<StageVersionCount> stage_versions(std::optional<std::int64_t> class_id) override;

  // ShareStore (postgres_shares.cc).
  std::optional<IssuedShare> create_share(std::int64_t job_id, std::int64_t learner_id,
                                          std::int64_t max_live) override;
  bool revoke_share(std::int64_t job_id, std::int64_t learner_id) override;
  std::optional<JobShare> job_share(std::int64_t job_id, std::int64_t learner_id) override;
  std::vector<ClassShare> class_shares(std::int64_t class_id, int limit) override;
  bool stop_class_share(std::int64_t class_id, std::int64_t job_id, const AuditNote& note) override;
  std::optional<JobRecord> shared_job(const std::string& token) override;

  // LISTEN on a connection of its own; enqueue and every return to the queue NOTIFY on commit.
  void watch_new_jobs(std::function<void()> on_new_jobs) override;
  void stop_watching() override;

  class Session;  // one pooled connection lent to one call (postgres_session.h)

 private:
  // Runs `work` on a pooled connection; retries once on a fresh connection when the first
  // statement found the connection broken. Returns what `work` returns.
  template <typename Work>
  auto with_session(Work&& work);
  pg_conn* connect();
  void migrate();
  // Applies or cancels a rejudging (the two differ only in what they do to the reruns).
  std::optional<Rejudging> end_rejudging(std::int64_t rejudging_id, const AuditNote& note, bool apply);
  std::optional<Rejudging> rejudging_by_id(Session& session, std::int64_t rejudging_id);
  // One class, a list of them, or a staff account with its roles, on a session already lent.
  std::vector<ClassInfo> classes_where(Session& session, const std::string& condition,
                                       const std::optional<std::string>& value);
  std::optional<StaffAccount> staff_where(Session& session, const std::string& condition,
                                          const std::string& value);

  std::string url_;
  std::string printable_url_;
  int max_connections_;
  std::mutex pool_mutex_;
  std::condition_variable pool_returned_;
  std::vector<pg_conn*> idle_;
  int lent_ = 0;
  std::thread watcher_;
  std::atomic<bool> stop_watching_{false};
};

// The schema's steps, in order: step N makes version N + 1 (tests build older databases from them).
const std::vector<const char*>& postgres_migrations();

// `url` with any password replaced by "***", for logs and /api/health.
std::string redact_postgres_url(const std::string& url);

}  // namespace cudojo

// The Store in one SQLite file, owned by one `cudojo serve` (which locks its data folder): the
// embedded default, needing no database server. WAL journal, synchronous writes, one connection
// behind a mutex (a single server's load is a handful of writes a second). Schema versions are
// SQLite's user_version, migrated in place at open.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <mutex>

#include "serve/store.h"
#include "serve/store_rejudging.h"
#include "serve/store_shares.h"

struct sqlite3;

namespace cudojo {

class SqliteStore final : public Store, public ClassStore, public RejudgeStore, public ShareStore {
 public:
  // busy_timeout_ms: how long a call waits for another connection's write lock (see ServeLimits).
  explicit SqliteStore(const std::filesystem::path& file,
                       int busy_timeout_ms = ServeLimits{}.database_busy_timeout_ms);
  ~SqliteStore() override;

  std::string_view kind() const override { return "sqlite"; }
  std::string location() const override { return file_.string(); }

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
  int requeue_interrupted() override;

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

  // ClassStore (sqlite_classes.cc).
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

  // RejudgeStore (sqlite_rejudging.cc).
  Rejudging create_rejudging(const RejudgeFilter& filter, const std::string& filter_text,
                             const std::string& reason, std::int64_t max_jobs,
                             const AuditNote& note) override;
  std::vector<Rejudging> list_rejudgings(std::optional<std::int64_t> class_id) override;
  std::optional<Rejudging> find_rejudging(std::int64_t rejudging_id) override;
  std::vector<RejudgeItem> rejudging_items(std::int64_t rejudging_id) override;
  std::optional<Rejudging> apply_rejudging(std::int64_t rejudging_id, const AuditNote& note) override;
  std::optional<Rejudging> cancel_rejudging(std::int64_t rejudging_id, const AuditNote& note) override;
  std::vector<StageVersionCount> stage_versions(std::optional<std::int64_t> class_id) override;

  // ShareStore (sqlite_shares.cc).
  std::optional<IssuedShare> create_share(std::int64_t job_id, std::int64_t learner_id,
                                          std::int64_t max_live) override;
  bool revoke_share(std::int64_t job_id, std::int64_t learner_id) override;
  std::optional<JobShare> job_share(std::int64_t job_id, std::int64_t learner_id) override;
  std::vector<ClassShare> class_shares(std::int64_t class_id, int limit) override;
  bool stop_class_share(std::int64_t class_id, std::int64_t job_id, const AuditNote& note) override;
  std::optional<JobRecord> shared_job(const std::string& token) override;

 private:
  void execute(const char* sql);
  void migrate();
  void migrate_to_classes();
  void migrate_to_rejudging();
  void migrate_to_shares();  // sqlite_shares.cc
  // Stops every live link of the class's learners, as `staff_name` (under the write lock, in the
  // caller's transaction); how many.
  int stop_class_shares(std::int64_t class_id, const std::string& staff_name);  // sqlite_shares.cc
  // Applies or cancels a rejudging (the two differ only in what they do to the reruns).
  std::optional<Rejudging> end_rejudging(std::int64_t rejudging_id, const AuditNote& note, bool apply);
  std::optional<Rejudging> rejudging_by_id(std::int64_t rejudging_id);  // the mutex held
  // Writes the audit entry inside the caller's transaction.
  void insert_audit(const AuditNote& note);
  // Throws StoreError kConflict when `staff_id` is the class's only instructor (inside the caller's
  // transaction, which holds the write lock).
  void keep_an_instructor(std::int64_t class_id, std::int64_t staff_id);
  // The staff account with the roles it holds (the mutex held).
  std::optional<StaffAccount> staff_where(const char* condition, const std::string& value);
  // Swaps two jobs' Nsight Compute reports (either may have none), inside the caller's transaction.
  void swap_ncu_reports(std::int64_t first, std::int64_t second);
  // Requeues running jobs matching `where` (SQL over jobs), failing those started too often.
  int take_back_running(const char* where, const std::string& phase);
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
  std::filesystem::path file_;
  ino_t inode_ = 0;
};

}  // namespace cudojo

// The store as the server uses it: every call passed to the real one, and each write's outcome
// remembered. A full disk refuses writes while reads still answer, so a health check that only
// reads would say all is well while every submission fails; through this, /api/health reports
// the store as failing from the first write that failed until a write succeeds again.
//
// A write "succeeds" only when it wrote something (a claim that found no job, or a renewal of no
// lease, says nothing either way); the node's heartbeat writes its row every heartbeat_ms, so a
// store that recovers is seen within one heartbeat.
#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "serve/store.h"

namespace cudojo {

class WatchedStore final : public Store {
 public:
  explicit WatchedStore(Store& store) : store_(store) {}

  struct WriteFailure {
    std::string cause;  // the store's own message, for the log and operators; never sent to clients
    double since = 0;   // when the first write of this failure failed, seconds since the epoch
  };
  std::optional<WriteFailure> write_failure() const;

  std::string_view kind() const override { return store_.kind(); }
  std::string location() const override { return store_.location(); }
  IssuedLearner add_learner(const NewLearner& learner) override;
  std::optional<Learner> find_learner_by_token(const std::string& token) override {
    return store_.find_learner_by_token(token);
  }
  std::optional<Learner> set_leaderboard(std::int64_t learner_id, bool leaderboard) override;
  std::optional<std::string> learner_token_digest(std::int64_t learner_id) override {
    return store_.learner_token_digest(learner_id);
  }
  Enqueued submit(const Submission& submission, const QueueLimits& limits = {}) override;
  std::int64_t pending_count() override { return store_.pending_count(); }
  std::int64_t pending_count(std::int64_t learner_id) override { return store_.pending_count(learner_id); }
  std::int64_t queue_position(std::int64_t job_id) override { return store_.queue_position(job_id); }
  bool withdraw_queued(std::int64_t job_id, std::int64_t learner_id) override {
    return store_.withdraw_queued(job_id, learner_id);
  }
  std::optional<JobRecord> claim_next(const std::string& holder, double lease_seconds) override;
  int renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) override;
  bool set_phase(const JobClaim& claim, const std::string& phase) override;
  bool finish(const JobClaim& claim, const std::string& verdict, const std::string& report_json) override;
  bool requeue(const JobClaim& claim, const std::string& phase) override;
  int requeue_expired() override;
  int requeue_interrupted() override;
  std::optional<JobRecord> job(std::int64_t job_id) override { return store_.job(job_id); }
  bool keep_ncu_report(const JobClaim& claim, const std::string& bytes) override;
  std::optional<std::string> ncu_report(std::int64_t job_id) override { return store_.ncu_report(job_id); }
  std::vector<JobProgress> job_progress(const std::vector<std::int64_t>& job_ids) override {
    return store_.job_progress(job_ids);
  }
  std::vector<JobSummary> history(std::int64_t learner_id, const std::optional<std::string>& stage, int limit,
                                  std::optional<std::int64_t> before) override {
    return store_.history(learner_id, stage, limit, before);
  }
  std::vector<StageProgress> progress(std::int64_t learner_id) override {
    return store_.progress(learner_id);
  }
  std::vector<LeaderboardEntry> leaderboard(std::int64_t class_id, const std::string& stage,
                                            int limit) override {
    return store_.leaderboard(class_id, stage, limit);
  }
  void register_node(const NodeInfo& node) override;
  std::vector<NodeInfo> nodes(double seen_within_seconds) override {
    return store_.nodes(seen_within_seconds);
  }
  std::optional<std::string> problem() override { return store_.problem(); }
  ClassStore& classes() override { return store_.classes(); }
  RejudgeStore& rejudgings() override { return store_.rejudgings(); }
  ShareStore& shares() override { return store_.shares(); }
  void watch_new_jobs(std::function<void()> on_new_jobs) override {
    store_.watch_new_jobs(std::move(on_new_jobs));
  }
  void stop_watching() override { store_.stop_watching(); }

 private:
  // Runs a write; `wrote` says from its result whether it wrote anything.
  template <typename Write, typename Wrote>
  auto watched(Write&& write, Wrote&& wrote);
  void failed(const StoreError& error);
  void succeeded();

  Store& store_;
  mutable std::mutex mutex_;
  std::optional<WriteFailure> failure_;
};

}  // namespace cudojo

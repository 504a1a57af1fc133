#include "serve/watched_store.h"

#include <fmt/format.h>

#include "serve/store_internal.h"

namespace cudojo {

namespace {

// The store's own failures, as opposed to a refusal of the request (a name taken, a full queue).
bool is_store_failure(const StoreError& error) {
  return error.code() == StoreErrorCode::kInternal || error.code() == StoreErrorCode::kUnavailable;
}

}  // namespace

template <typename Write, typename Wrote>
auto WatchedStore::watched(Write&& write, Wrote&& wrote) {
  try {
    auto result = write();
    if (wrote(result)) succeeded();
    return result;
  } catch (const StoreError& error) {
    if (is_store_failure(error)) failed(error);
    throw;
  }
}

void WatchedStore::failed(const StoreError& error) {
  std::lock_guard lock(mutex_);
  if (!failure_) {
    failure_ = WriteFailure{error.what(), store_internal::now_seconds()};
    fmt::print(stderr, "cudojo serve: the store refuses writes: {}\n", error.what());
  } else {
    failure_->cause = error.what();
  }
}

void WatchedStore::succeeded() {
  std::lock_guard lock(mutex_);
  if (!failure_) return;
  fmt::print(stderr, "cudojo serve: the store takes writes again\n");
  failure_.reset();
}

std::optional<WatchedStore::WriteFailure> WatchedStore::write_failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

IssuedLearner WatchedStore::add_learner(const NewLearner& learner) {
  return watched([&] { return store_.add_learner(learner); }, [](const IssuedLearner&) { return true; });
}

std::optional<Learner> WatchedStore::set_leaderboard(std::int64_t learner_id, bool leaderboard) {
  return watched([&] { return store_.set_leaderboard(learner_id, leaderboard); },
                 [](const std::optional<Learner>& learner) { return learner.has_value(); });
}

Enqueued WatchedStore::submit(const Submission& submission, const QueueLimits& limits) {
  return watched([&] { return store_.submit(submission, limits); },
                 [](const Enqueued& queued) { return !queued.replayed; });
}

std::optional<JobRecord> WatchedStore::claim_next(const std::string& holder, double lease_seconds) {
  return watched([&] { return store_.claim_next(holder, lease_seconds); },
                 [](const std::optional<JobRecord>& job) { return job.has_value(); });
}

int WatchedStore::renew_leases(const std::vector<JobClaim>& claims, double lease_seconds) {
  return watched([&] { return store_.renew_leases(claims, lease_seconds); },
                 [](int renewed) { return renewed > 0; });
}

bool WatchedStore::set_phase(const JobClaim& claim, const std::string& phase) {
  return watched([&] { return store_.set_phase(claim, phase); }, [](bool set) { return set; });
}

bool WatchedStore::finish(const JobClaim& claim, const std::string& verdict, const std::string& report_json) {
  return watched([&] { return store_.finish(claim, verdict, report_json); }, [](bool done) { return done; });
}

bool WatchedStore::keep_ncu_report(const JobClaim& claim, const std::string& bytes) {
  return watched([&] { return store_.keep_ncu_report(claim, bytes); }, [](bool kept) { return kept; });
}

bool WatchedStore::requeue(const JobClaim& claim, const std::string& phase) {
  return watched([&] { return store_.requeue(claim, phase); }, [](bool moved) { return moved; });
}

int WatchedStore::requeue_expired() {
  return watched([&] { return store_.requeue_expired(); }, [](int moved) { return moved > 0; });
}

int WatchedStore::requeue_interrupted() {
  return watched([&] { return store_.requeue_interrupted(); }, [](int moved) { return moved > 0; });
}

void WatchedStore::register_node(const NodeInfo& node) {
  watched(
      [&] {
        store_.register_node(node);
        return true;
      },
      [](bool) { return true; });
}

}  // namespace cudojo

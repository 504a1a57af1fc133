// Rejudging: finished jobs judged again after a course changed, the new results kept beside the
// originals until a member of staff applies or cancels them as a whole (DOMjudge's model).
//
// A rejudging copies each chosen job into a new job row (its rerun) carrying `rejudging_id` and
// the original's id. Reruns go through the same queue, leases and judges as learners' jobs, so a
// node killed while judging one loses nothing; they are claimed only when no learner's job waits,
// and every query a learner, a grid or a leaderboard reads leaves them out. Applying swaps each
// rerun's verdict and report with its original's in one transaction: the original keeps its own
// submission time, so progress, late marks and first-accept times count it from when it was sent,
// and the rerun row keeps the replaced result. Cancelling deletes the reruns; nothing else changed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serve/store.h"

namespace cudojo {

// Which finished jobs a rejudging takes. Every part is optional; together they narrow. Reruns and
// jobs already in a rejudging that is still judging are never taken.
struct RejudgeFilter {
  std::optional<std::int64_t> class_id;  // none: every class (administrators only)
  std::optional<std::string> stage;
  std::optional<std::int64_t> learner_id;
  std::optional<std::string> verdict;
  std::optional<double> since;  // submitted at or after (seconds since the epoch)
  std::optional<double> until;  // submitted before
  // Only jobs whose recorded stage version differs from this one (the stage's current version):
  // what an instructor rejudges after changing a stage. Jobs with no recorded version count as
  // different.
  std::optional<std::string> not_version;
};

enum class RejudgingState { kJudging, kApplied, kCancelled };
std::string_view to_string(RejudgingState state);  // "judging", "applied", "cancelled"

struct Rejudging {
  std::int64_t id = 0;
  std::optional<std::int64_t> class_id;  // the filter's class; none: taken over every class
  Actor created_by;
  double created_at = 0;
  std::string filter;  // the filter as asked, for people (JSON text)
  std::string reason;
  RejudgingState state = RejudgingState::kJudging;
  std::optional<double> ended_at;  // applied or cancelled at
  std::int64_t jobs = 0;           // reruns made
  std::int64_t judged = 0;         // reruns finished
};

// One job of a rejudging: its result before and after, whichever row now holds each.
struct RejudgeItem {
  std::int64_t job_id = 0;    // the learner's job
  std::int64_t rerun_id = 0;  // its rerun
  std::int64_t learner_id = 0;
  std::string learner_name;
  std::int64_t class_id = 0;
  std::string stage;
  std::string language;
  double submitted_at = 0;
  JobState rerun_state = JobState::kQueued;
  std::optional<std::string> before_verdict;
  std::optional<std::string> after_verdict;  // none until the rerun finished
  std::optional<double> before_ratio;        // the gate's ratio (baseline's, else reference's)
  std::optional<double> after_ratio;
  std::optional<std::string> before_version;  // stage versions the two were judged under
  std::optional<std::string> after_version;
};

// How many finished jobs of a class (or all) were judged under each version of each stage.
struct StageVersionCount {
  std::string stage;
  std::optional<std::string> version;  // none: judged before versions were recorded
  std::int64_t jobs = 0;
};

class RejudgeStore {
 public:
  RejudgeStore() = default;
  virtual ~RejudgeStore() = default;
  RejudgeStore(const RejudgeStore&) = delete;
  RejudgeStore& operator=(const RejudgeStore&) = delete;

  // Makes the reruns of every job the filter matches, with the audit entry, in one transaction.
  // Throws StoreError kConflict when no job matches or more than `max_jobs` do (nothing made).
  virtual Rejudging create_rejudging(const RejudgeFilter& filter, const std::string& filter_text,
                                     const std::string& reason, std::int64_t max_jobs,
                                     const AuditNote& note) = 0;
  // Newest first; a class's only when `class_id` is given.
  virtual std::vector<Rejudging> list_rejudgings(std::optional<std::int64_t> class_id) = 0;
  virtual std::optional<Rejudging> find_rejudging(std::int64_t rejudging_id) = 0;
  // By learner name, then job id.
  virtual std::vector<RejudgeItem> rejudging_items(std::int64_t rejudging_id) = 0;
  // Swaps every rerun's result into its job. kConflict unless the rejudging is judging and every
  // rerun finished; nullopt for an unknown id.
  virtual std::optional<Rejudging> apply_rejudging(std::int64_t rejudging_id, const AuditNote& note) = 0;
  // Deletes the reruns (a judge running one has its result dropped). kConflict unless judging.
  virtual std::optional<Rejudging> cancel_rejudging(std::int64_t rejudging_id, const AuditNote& note) = 0;
  virtual std::vector<StageVersionCount> stage_versions(std::optional<std::int64_t> class_id) = 0;
};

}  // namespace cudojo

// Links to one job: a learner shows one of their finished jobs, read-only, to someone without an
// account here (a teaching assistant at office hours, a friend), and stops showing it when they like.
//
// A link is a random 256-bit token; the store keeps only its SHA-256 digest, as it does for learners'
// tokens (token_digest), so the token is shown once, to its owner, when the link is made. A job has at
// most one link: making one again replaces the digest, and the link made before stops working (it
// cannot be shown again, since its token is not kept). Stopping a link sets its revoked_at. Whoever
// holds a live link reads the job's stage, language, verdict, report and source, and nothing of the
// learner (serve/api_shares.cc). A link opens nothing once its job is not a learner's finished job
// any more, or its learner was removed from their class.
//
// A class's staff watch over its links: they list the live ones and stop any (stopped_by keeps who
// did), and an instructor may turn links off for the class (ClassInfo::sharing_open), which stops
// every live one of its learners for good and refuses new ones until links are turned on again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "serve/store.h"
#include "serve/store_classes.h"

namespace cudojo {

// A job's link as the store keeps it (never the token).
struct JobShare {
  std::int64_t job_id = 0;
  std::int64_t learner_id = 0;
  double created_at = 0;             // seconds since the epoch
  std::optional<double> revoked_at;  // set once it was stopped
  // Who stopped it when it was not its learner: the member of staff, by hand, by turning the
  // class's links off or by removing the learner.
  std::optional<std::string> stopped_by;
};

// A live link as the class's staff list it.
struct ClassShare {
  std::int64_t job_id = 0;
  std::int64_t learner_id = 0;
  std::string learner_name;
  std::string stage;
  std::optional<std::string> verdict;
  double created_at = 0;
};

struct IssuedShare {
  JobShare share;
  std::string token;  // shown once, to the job's owner
};

class ShareStore {
 public:
  ShareStore() = default;
  virtual ~ShareStore() = default;
  ShareStore(const ShareStore&) = delete;
  ShareStore& operator=(const ShareStore&) = delete;

  // A new link to `job_id`, which must be `learner_id`'s own finished job; the job's link before it, if
  // any, stops working. nullopt when the job is not theirs (unknown, another learner's, a rerun).
  // Throws StoreError kConflict when the job is not finished yet, or when the learner already has
  // `max_live` live links to other jobs (counted in the same transaction as the write), and
  // kNotAllowed when the learner's class has links turned off (read in that transaction too, so a
  // link made as they are turned off is either refused or stopped with the others).
  virtual std::optional<IssuedShare> create_share(std::int64_t job_id, std::int64_t learner_id,
                                                  std::int64_t max_live) = 0;
  // Stops the live link of `learner_id`'s job `job_id`; false when it has none.
  virtual bool revoke_share(std::int64_t job_id, std::int64_t learner_id) = 0;
  // The link of `learner_id`'s job `job_id`, live or stopped; nullopt when the job was never shared.
  virtual std::optional<JobShare> job_share(std::int64_t job_id, std::int64_t learner_id) = 0;
  // The live links of the class's learners that open (as shared_job says), newest first; at most
  // `limit`.
  virtual std::vector<ClassShare> class_shares(std::int64_t class_id, int limit) = 0;
  // Stops the live link to job `job_id` of a learner of class `class_id` on the word of the member
  // of staff `note` names, with the audit entry, in one transaction; false when there is none.
  virtual bool stop_class_share(std::int64_t class_id, std::int64_t job_id, const AuditNote& note) = 0;
  // The job a live link's token opens: a finished job, not a rerun, whose learner is not removed;
  // nullopt for any other token.
  virtual std::optional<JobRecord> shared_job(const std::string& token) = 0;
};

}  // namespace cudojo

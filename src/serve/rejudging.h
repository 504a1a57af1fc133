// What a rejudging would change, read from its items (serve/store_rejudging.h): the matrix of
// verdicts before -> after and the jobs that flip, as the instructor sees them before applying;
// and the JSON shapes of a rejudging that the API and `cudojo rejudge` both print.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "serve/course_catalog.h"
#include "serve/store_rejudging.h"

namespace cudojo {

struct RejudgeSummary {
  std::int64_t jobs = 0;
  std::int64_t judged = 0;   // reruns finished
  std::int64_t flipped = 0;  // finished reruns whose verdict differs from the original's
  // (before, after) -> jobs; only finished reruns.
  std::map<std::pair<std::string, std::string>, std::int64_t> matrix;
  std::vector<const RejudgeItem*> flips;  // into the items summarized, in their order
};

RejudgeSummary summarize(const std::vector<RejudgeItem>& items);

nlohmann::json rejudging_json(const Rejudging& rejudging);
// The rejudging with its summary and, when `with_items`, every item (else only the flips).
nlohmann::json rejudging_detail_json(const Rejudging& rejudging, const std::vector<RejudgeItem>& items,
                                     bool with_items);
// The filter as JSON text, as the rejudging records it.
std::string filter_text(const RejudgeFilter& filter);

// What a request asks a rejudging to take: the API's body, and `cudojo rejudge start`'s flags put in
// the same shape. Keys: stage (an id or alias), learner (an id), verdict, since and until (ISO 8601
// with a zone, or seconds since 1970), older_versions (true: only jobs judged under another version
// of the stage than the course's current one; needs stage), reason (up to 500 characters). The
// class is the caller's to set. The sentence of what is wrong otherwise.
struct RejudgeRequest {
  RejudgeFilter filter;
  std::string reason;
};
std::variant<RejudgeRequest, std::string> parse_rejudge_request(const nlohmann::json& body,
                                                                const LoadedCourse& course);

}  // namespace cudojo

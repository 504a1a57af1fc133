// Learner routes: signing up (anyone, a bounded number an hour from one address), and the signed-in
// learner's own account, history and progress. None of them shows one learner anything of another.
#include <fmt/format.h>

#include "http/client_address.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/job_json.h"

namespace cudojo {

using api_internal::kSignInFirst;
using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

void Api::create_learner(const Request& request, Response& response) {
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("name") || !body["name"].is_string()) {
    return send_error(response, 400, "send a JSON object {\"name\": \"...\"}");
  }
  const std::string address = http::address_group(request.client_address);
  {
    std::lock_guard lock(new_learners_mutex_);
    const auto now = std::chrono::steady_clock::now();
    auto expired = [&](const std::deque<std::chrono::steady_clock::time_point>& created) {
      return created.empty() || now - created.back() > std::chrono::hours(1);
    };
    // Addresses idle for an hour are forgotten, so the table holds only the last hour's.
    if (new_learners_by_address_.size() > 10'000)
      std::erase_if(new_learners_by_address_, [&](const auto& entry) { return expired(entry.second); });
    auto& created = new_learners_by_address_[address];
    while (!created.empty() && now - created.front() > std::chrono::hours(1)) created.pop_front();
    if (static_cast<int>(created.size()) >= limits_.max_new_learners_per_address_per_hour) {
      response.set_header("Retry-After", "3600");
      return send_error(response, 429, sign_up_refusal());
    }
    created.push_back(now);
  }
  // A sign-up that made no learner (a taken or malformed name, the store failing) gives its place
  // in the hour back, so a class's typos do not use up its address's sign-ups.
  auto give_back = [&] {
    std::lock_guard lock(new_learners_mutex_);
    auto& created = new_learners_by_address_[address];
    if (!created.empty()) created.pop_back();
  };
  if (!store_usable(request, response)) return give_back();
  try {
    IssuedLearner issued = store_.create_learner(body["name"].get<std::string>());
    send_json(response, 201,
              {{"id", issued.learner.id}, {"name", issued.learner.name}, {"token", issued.token}});
  } catch (const StoreError& error) {
    give_back();
    answer_store_error(request, response, error);
  }
}

void Api::get_me(const Request& request, Response& response) {
  const auto learner = signed_in(request);
  if (!learner) return send_error(response, 401, "this token belongs to no learner; sign in again");
  send_json(response, 200, learner_json(*learner));
}

void Api::put_me(const Request& request, Response& response) {
  const auto learner = signed_in(request);
  if (!learner) return send_error(response, 401, "this token belongs to no learner; sign in again");
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("leaderboard") ||
      !body["leaderboard"].is_boolean()) {
    return send_error(response, 400, "send {\"leaderboard\": true} or {\"leaderboard\": false}");
  }
  if (!store_usable(request, response)) return;
  try {
    const auto updated = store_.set_leaderboard(learner->id, body["leaderboard"].get<bool>());
    if (!updated) return send_error(response, 401, "this token belongs to no learner; sign in again");
    send_json(response, 200, learner_json(*updated));
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::history(const Request& request, Response& response) {
  const auto learner = signed_in(request);
  if (!learner) return send_error(response, 401, kSignInFirst);
  std::optional<std::string> stage;
  if (const auto asked = request.param("stage")) {
    const Stage* found = find_stage(course_, *asked);
    if (!found) return send_error(response, 400, fmt::format("no stage '{}'", *asked));
    stage = found->id;
  }
  int limit = limits_.history_default_limit;
  if (const auto asked_limit = request.param("limit")) {
    const auto asked = parse_id(*asked_limit);
    if (!asked)
      return send_error(response, 400,
                        fmt::format("limit is a whole number from 1 to {}", limits_.history_limit));
    limit = static_cast<int>(std::min<std::int64_t>(*asked, limits_.history_limit));
  }
  std::optional<std::int64_t> before;
  if (const auto cursor = request.param("before")) {
    before = parse_id(*cursor);
    if (!before) return send_error(response, 400, "before is a job id, as next_before gave it");
  }
  // One job more than the page shows says whether another page follows.
  auto jobs = store_.history(learner->id, stage, limit + 1, before);
  const bool more = static_cast<int>(jobs.size()) > limit;
  if (more) jobs.pop_back();
  json list = json::array();
  for (const auto& job : jobs) list.push_back(job_summary_json(job));
  send_json(response, 200, {{"jobs", list}, {"next_before", more ? json(jobs.back().id) : json(nullptr)}});
}

void Api::progress(const Request& request, Response& response) {
  const auto learner = signed_in(request);
  if (!learner) return send_error(response, 401, kSignInFirst);
  json stages = json::object();
  for (const auto& stage : store_.progress(learner->id)) {
    stages[stage.stage] = {{"status", stage.accepted ? "accepted" : "attempted"},
                           {"attempts", stage.attempts},
                           {"best_time_ratio", optional_json(stage.best_time_ratio)},
                           {"best_time_ms", optional_json(stage.best_time_ms)},
                           {"last_job", stage.last_job}};
  }
  send_json(response, 200, {{"stages", stages}});
}

}  // namespace cudojo

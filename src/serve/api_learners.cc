// Learner routes: signing up (open sign-up, a bounded number an hour from one address, when the
// server takes it), joining a class by its invite code (a bounded number an hour per class), whoever
// is signed in asking who they are, and the signed-in learner's own account, history and progress.
// None of them shows one learner anything of another.
#include <fmt/format.h>

#include "http/client_address.h"
#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/job_json.h"
#include "serve/store_internal.h"

namespace cudojo {

using api_internal::kSignInFirst;
using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

json deadlines_json(const std::vector<Deadline>& deadlines) {
  json found = json::object();
  for (const Deadline& deadline : deadlines)
    found[deadline.stage] = {{"due_at", deadline.due_at}, {"hide_leaderboard", deadline.hide_leaderboard}};
  return found;
}

json issued_learner_json(const IssuedLearner& issued, const ClassInfo& class_info) {
  json learner = learner_json(issued.learner);
  learner["token"] = issued.token;
  learner["class"] = {{"id", class_info.id}, {"name", class_info.name}};
  return learner;
}

// The optional string field `key` of a sign-up's body: "" when absent; nullopt (after answering 400)
// when it is there but not a string.
std::optional<std::string> optional_text(const json& body, const char* key, http::Response& response) {
  if (!body.contains(key) || body[key].is_null()) return std::string();
  if (body[key].is_string()) return body[key].get<std::string>();
  send_error(response, 400, fmt::format("\"{}\" is a string", key));
  return std::nullopt;
}

}  // namespace

void Api::create_learner(const Request& request, Response& response) {
  if (!open_sign_up_) {
    return send_error(response, 403,
                      "this server takes new learners only with their class's invite code (POST /api/join) "
                      "or a token from their instructor");
  }
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
    NewLearner wanted;
    wanted.name = body["name"].get<std::string>();
    wanted.max_class_learners = limits_.max_learners_per_class;
    IssuedLearner issued = store_.add_learner(wanted);
    response.set_header("Cache-Control", "no-store");
    send_json(response, 201, issued_learner_json(issued, store_.classes().default_class()));
  } catch (const StoreError& error) {
    give_back();
    answer_store_error(request, response, error);
  }
}

void Api::join_class(const Request& request, Response& response) {
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("invite") || !body["invite"].is_string() ||
      !body.contains("name") || !body["name"].is_string()) {
    return send_error(
        response, 400,
        "send {\"invite\": \"<your class's code>\", \"name\": \"...\"} (and, if you like, \"email\")");
  }
  // A student id is the roster's to give (or an instructor's): one a learner typed would let them
  // claim a classmate's roster entry, or learn which ids a roster holds.
  if (body.contains("student_id")) {
    return send_error(
        response, 400,
        "a student id comes from your class's roster, not from joining: ask your instructor for the "
        "token of your roster entry, or join without one");
  }
  NewLearner wanted;
  wanted.name = body["name"].get<std::string>();
  const auto email = optional_text(body, "email", response);
  if (!email) return;
  wanted.email = *email;
  if (!wanted.email.empty()) {
    if (auto problem = email_problem(wanted.email)) return send_error(response, 400, *problem);
  }
  const std::string address = http::address_group(request.client_address);
  if (!may_try_invite(address)) {
    response.set_header("Retry-After", "3600");
    return send_error(
        response, 429,
        fmt::format("{} wrong invite codes from this address in the last hour; check the code with "
                    "your instructor and try again later",
                    limits_.max_failed_joins_per_address_per_hour));
  }
  if (!store_usable(request, response)) return;
  const auto found =
      store_.classes().find_class_by_invite(normalize_invite_code(body["invite"].get<std::string>()));
  if (!found) {
    count_failed_join(address);
    return send_error(response, 404, "no class has this invite code; check it with your instructor");
  }
  if (!found->joining_open) {
    return send_error(response, 403,
                      "this class is not taking new learners; ask your instructor for the token of your "
                      "roster entry");
  }
  // Joins are counted per class, not per address: a class behind one school address joins as a
  // crowd. The store counts them, and the class's size, in the insert's own transaction.
  wanted.class_id = found->id;
  wanted.origin = LearnerOrigin::kInvite;
  wanted.max_invites_per_hour = limits_.max_joins_per_class_per_hour;
  wanted.max_class_learners = limits_.max_learners_per_class;
  try {
    response.set_header("Cache-Control", "no-store");
    send_json(response, 201, issued_learner_json(store_.add_learner(wanted), *found));
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

bool Api::may_try_invite(const std::string& address) {
  std::lock_guard lock(failed_joins_mutex_);
  const auto found = failed_joins_.find(address);
  if (found == failed_joins_.end()) return true;
  const auto now = std::chrono::steady_clock::now();
  while (!found->second.empty() && now - found->second.front() > std::chrono::hours(1))
    found->second.pop_front();
  return static_cast<int>(found->second.size()) < limits_.max_failed_joins_per_address_per_hour;
}

void Api::count_failed_join(const std::string& address) {
  std::lock_guard lock(failed_joins_mutex_);
  const auto now = std::chrono::steady_clock::now();
  // Addresses idle for an hour are forgotten, so the table holds only the last hour's.
  if (failed_joins_.size() > 10'000) {
    std::erase_if(failed_joins_, [&](const auto& entry) {
      return entry.second.empty() || now - entry.second.back() > std::chrono::hours(1);
    });
  }
  failed_joins_[address].push_back(now);
}

void Api::get_me(const Request& request, Response& response) {
  Caller who = caller(request);
  if (who.staff) {
    const StaffAccount& staff = *who.staff;
    json classes = json::array();
    for (const ClassInfo& class_info : store_.classes().list_classes()) {
      const auto role = staff.roles.find(class_info.id);
      if (!staff.admin && role == staff.roles.end()) continue;
      classes.push_back({{"id", class_info.id},
                         {"name", class_info.name},
                         {"role", role == staff.roles.end() ? "admin" : to_string(role->second)}});
    }
    return send_json(response, 200,
                     {{"kind", "staff"},
                      {"id", staff.id},
                      {"name", staff.name},
                      {"admin", staff.admin},
                      {"classes", classes}});
  }
  if (!who.learner) return send_error(response, 401, "this token belongs to no learner; sign in again");
  json me = learner_json(*who.learner);
  me["kind"] = "learner";
  const auto class_info = store_.classes().find_class(who.learner->class_id);
  me["class"] = {{"id", who.learner->class_id}, {"name", class_info ? class_info->name : ""}};
  me["deadlines"] = deadlines_json(store_.classes().deadlines(who.learner->class_id));
  send_json(response, 200, me);
}

void Api::put_me(const Request& request, Response& response) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
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
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
  std::optional<std::string> stage;
  if (const auto asked = request.param("stage")) {
    const auto course = course_.current();  // kept while its stages are used
    const Stage* found = find_stage(course->stages, *asked);
    if (!found) return send_error(response, 400, fmt::format("no stage '{}'", *asked));
    stage = found->id;
  }
  int limit = 0;
  if (!page_limit(request, response, limit)) return;
  std::optional<std::int64_t> before;
  if (const auto cursor = request.param("before")) {
    before = parse_id(*cursor);
    if (!before) return send_error(response, 400, "before is a job id, as next_before gave it");
  }
  // One job more than the page shows says whether another page follows.
  auto jobs = store_.history(learner->id, stage, limit + 1, before);
  const bool more = static_cast<int>(jobs.size()) > limit;
  if (more) jobs.pop_back();
  const auto deadlines = store_.classes().deadlines(learner->class_id);
  json list = json::array();
  for (const auto& job : jobs) {
    json summary = job_summary_json(job);
    summary["late"] = is_late(deadlines, job.stage, job.created_at);
    list.push_back(std::move(summary));
  }
  send_json(response, 200, {{"jobs", list}, {"next_before", more ? json(jobs.back().id) : json(nullptr)}});
}

void Api::progress(const Request& request, Response& response) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
  json stages = json::object();
  for (const auto& stage : store_.progress(learner->id)) {
    stages[stage.stage] = {{"status", stage.accepted ? "accepted" : "attempted"},
                           {"attempts", stage.attempts},
                           {"best_time_ratio", optional_json(stage.best_time_ratio)},
                           {"best_time_ms", optional_json(stage.best_time_ms)},
                           {"last_job", stage.last_job}};
  }
  send_json(
      response, 200,
      {{"stages", stages}, {"deadlines", deadlines_json(store_.classes().deadlines(learner->class_id))}});
}

}  // namespace cudojo

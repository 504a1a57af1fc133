// A class's learners, for its staff: the roster, importing one (CSV), renaming or removing a learner,
// their tokens (one reset, or a pre-made roster's handed out at once), and any learner's work in the
// class, for office hours. Reading is for any of the class's staff; every change is an instructor's
// (or an administrator's), written with its audit entry.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/job_json.h"

namespace cudojo {

using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

json optional_text_json(const std::optional<std::string>& text) { return text ? json(*text) : json(nullptr); }

json roster_entry_json(const RosterEntry& entry) {
  return {{"id", entry.id},
          {"student_id", optional_text_json(entry.student_id)},
          {"name", entry.name},
          {"email", optional_text_json(entry.email)},
          {"created_at", entry.created_at},
          {"signed_in_at", optional_json(entry.signed_in_at)},
          {"removed_at", optional_json(entry.removed_at)}};
}

// What the audit log says a learner is: their name and, when they have one, their student id.
std::string who(const RosterEntry& entry) {
  return entry.student_id ? fmt::format("{} ({})", entry.name, *entry.student_id) : entry.name;
}

}  // namespace

void Api::list_roster(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  json list = json::array();
  for (const RosterEntry& entry : store_.classes().roster(found->class_info.id))
    list.push_back(roster_entry_json(entry));
  send_json(response, 200, {{"learners", list}});
}

void Api::import_roster(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("csv") || !body["csv"].is_string())
    return send_error(response, 400, "send {\"csv\": \"student_id,name,email\\n...\"}");
  const ParsedRoster parsed = parse_roster_csv(body["csv"].get<std::string>(), limits_.max_roster_rows);
  if (!parsed.problems.empty()) {
    json problems = json::array();
    for (const RosterProblem& problem : parsed.problems)
      problems.push_back({{"line", problem.line}, {"problem", problem.problem}});
    return send_json(response, 422,
                     {{"error", fmt::format("the roster was not imported: {} problem{} (each with its line)",
                                            parsed.problems.size(), parsed.problems.size() == 1 ? "" : "s")},
                      {"problems", problems}});
  }
  if (parsed.rows.empty()) return send_error(response, 400, "the roster holds no learners");
  if (!store_usable(request, response)) return;
  try {
    const RosterImportCounts counts =
        store_.classes().import_roster(found->class_info.id, parsed.rows, limits_.max_learners_per_class,
                                       {found->actor(), found->class_info.id, "roster.import",
                                        fmt::format("imported a roster of {} learner{}", parsed.rows.size(),
                                                    parsed.rows.size() == 1 ? "" : "s")});
    send_json(response, 200,
              {{"created", counts.created}, {"updated", counts.updated}, {"unchanged", counts.unchanged}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::change_learner(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto learner_id = parse_id(request.match(2));
  const auto before =
      learner_id ? store_.classes().roster_entry(found->class_info.id, *learner_id) : std::nullopt;
  if (!before) return send_error(response, 404, "no such learner in this class");
  json body = json::parse(request.body, nullptr, false);
  const char* shape =
      "any of {\"name\": \"...\", \"student_id\": \"...\", \"email\": \"...\", \"removed\": true}";
  if (body.is_discarded() || !body.is_object())
    return send_error(response, 400, fmt::format("send {}", shape));
  LearnerChange change;
  std::vector<std::string> said;
  for (const auto& item : body.items()) {
    const std::string& key = item.key();
    if (key == "removed") {
      if (!item.value().is_boolean()) return send_error(response, 400, "\"removed\" is true or false");
      change.removed = item.value().get<bool>();
      continue;
    }
    if (key != "name" && key != "student_id" && key != "email")
      return send_error(response, 400, fmt::format("send {}", shape));
    if (!item.value().is_string()) return send_error(response, 400, fmt::format("\"{}\" is a string", key));
    const std::string value = item.value().get<std::string>();
    if (key == "student_id" && !value.empty()) {
      if (auto problem = student_id_problem(value)) return send_error(response, 400, *problem);
    }
    if (key == "email" && !value.empty()) {
      if (auto problem = email_problem(value)) return send_error(response, 400, *problem);
    }
    (key == "name" ? change.name : key == "student_id" ? change.student_id : change.email) = value;
    said.push_back(fmt::format("{} '{}'", key, value));
  }
  if (said.empty() && !change.removed)
    return send_error(response, 400, fmt::format("nothing to change: send {}", shape));
  std::string action = "learner.change";
  std::string detail = said.empty() ? fmt::format("left {} as they were", who(*before))
                                    : fmt::format("changed {}: {}", who(*before), fmt::join(said, ", "));
  if (change.removed && *change.removed != before->removed_at.has_value()) {
    action = *change.removed ? "learner.remove" : "learner.restore";
    detail = fmt::format("{} {}{}", *change.removed ? "removed" : "restored", who(*before),
                         said.empty() ? "" : fmt::format(" and changed {}", fmt::join(said, ", ")));
  }
  if (!store_usable(request, response)) return;
  try {
    const auto after = store_.classes().change_learner(
        found->class_info.id, before->id, change, {found->actor(), found->class_info.id, action, detail});
    if (!after) return send_error(response, 404, "no such learner in this class");
    // A removed learner's token is gone: so are the streams its tickets opened on this node.
    if (after->removed_at) streams_.close_learner(after->id);
    send_json(response, 200, roster_entry_json(*after));
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::reset_learner_token(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto learner_id = parse_id(request.match(2));
  const auto learner =
      learner_id ? store_.classes().roster_entry(found->class_info.id, *learner_id) : std::nullopt;
  if (!learner) return send_error(response, 404, "no such learner in this class");
  if (learner->removed_at) return send_error(response, 409, "this learner was removed; restore them first");
  if (!store_usable(request, response)) return;
  try {
    const auto token = store_.classes().reset_learner_token(
        found->class_info.id, learner->id,
        {found->actor(), found->class_info.id, "learner.token_reset",
         fmt::format("gave {} a new token (the old one stopped working)", who(*learner))});
    if (!token) return send_error(response, 404, "no such learner in this class");
    streams_.close_learner(learner->id);
    response.set_header("Cache-Control", "no-store");
    send_json(response, 200,
              {{"id", learner->id},
               {"name", learner->name},
               {"student_id", optional_text_json(learner->student_id)},
               {"token", *token}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::issue_tokens(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  // An empty body takes the defaults; anything else must be the object the route names, so that a
  // body cut short never hands out tokens under defaults nobody asked for.
  json body = request.body.empty() ? json::object() : json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) body = nullptr;
  const auto text_or = [&](const char* key, const char* otherwise) -> std::optional<std::string> {
    if (!body.is_object() || !body.contains(key)) return otherwise;
    if (!body[key].is_string()) return std::nullopt;
    return body[key].get<std::string>();
  };
  const auto which = text_or("learners", "not_signed_in");
  const auto format = text_or("format", "json");
  if (body.is_null() || !which || !format || (*which != "not_signed_in" && *which != "all") ||
      (*format != "json" && *format != "csv")) {
    return send_error(
        response, 400,
        "send {\"learners\": \"not_signed_in\" (default) or \"all\", \"format\": \"json\" (default) "
        "or \"csv\"}");
  }
  if (!store_usable(request, response)) return;
  try {
    const auto issued = store_.classes().issue_tokens(
        found->class_info.id, *which == "not_signed_in",
        {found->actor(), found->class_info.id, "tokens.issue",
         *which == "all" ? "gave every learner a new token"
                         : "gave the learners who never signed in a new token"});
    response.set_header("Cache-Control", "no-store");
    if (*format == "csv") {
      std::string csv = "student_id,name,email,token\r\n";
      for (const IssuedToken& entry : issued) {
        csv += fmt::format("{},{},{},{}\r\n", csv_field(entry.learner.student_id.value_or("")),
                           csv_field(entry.learner.name), csv_field(entry.learner.email.value_or("")),
                           entry.token);
      }
      response.set_header("Content-Disposition",
                          fmt::format("attachment; filename=\"class-{}-tokens.csv\"", found->class_info.id));
      response.status = 200;
      return response.set_content(csv, "text/csv; charset=utf-8");
    }
    json list = json::array();
    for (const IssuedToken& entry : issued) {
      json shown = roster_entry_json(entry.learner);
      shown["token"] = entry.token;
      list.push_back(std::move(shown));
    }
    send_json(response, 200, {{"tokens", list}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::learner_history(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  const auto learner_id = parse_id(request.match(2));
  const auto learner =
      learner_id ? store_.classes().roster_entry(found->class_info.id, *learner_id) : std::nullopt;
  if (!learner) return send_error(response, 404, "no such learner in this class");
  std::optional<std::string> stage;
  if (const auto asked = request.param("stage")) {
    const auto course = course_.current();  // kept while its stages are used
    const Stage* stage_found = find_stage(course->stages, *asked);
    if (!stage_found) return send_error(response, 400, fmt::format("no stage '{}'", *asked));
    stage = stage_found->id;
  }
  int limit = 0;
  if (!page_limit(request, response, limit)) return;
  std::optional<std::int64_t> before;
  if (const auto cursor = request.param("before")) {
    before = parse_id(*cursor);
    if (!before) return send_error(response, 400, "before is a job id, as next_before gave it");
  }
  auto jobs = store_.history(learner->id, stage, limit + 1, before);
  const bool more = static_cast<int>(jobs.size()) > limit;
  if (more) jobs.pop_back();
  const auto deadlines = store_.classes().deadlines(found->class_info.id);
  json list = json::array();
  for (const auto& job : jobs) {
    json summary = job_summary_json(job);
    summary["late"] = is_late(deadlines, job.stage, job.created_at);
    list.push_back(std::move(summary));
  }
  send_json(response, 200,
            {{"learner", roster_entry_json(*learner)},
             {"jobs", list},
             {"next_before", more ? json(jobs.back().id) : json(nullptr)}});
}

void Api::class_job(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  const auto in_class = job_in_class(*found, request.match(2), response);
  if (!in_class) return;
  const JobRecord& job = in_class->job;
  const std::int64_t position = job.state == JobState::kQueued ? store_.queue_position(job.id) : 0;
  json shown = with_version(with_lateness(job_json(job, position, true), job, found->class_info.id), job);
  shown["learner"] = roster_entry_json(in_class->learner);
  shown["share"] = api_internal::share_state_json(store_.shares().job_share(job.id, job.learner_id));
  if (job.rejudging_id) shown["rejudging"] = *job.rejudging_id;
  send_json(response, 200, shown);
}

}  // namespace cudojo

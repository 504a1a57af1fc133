// Rejudgings (serve/store_rejudging.h) and the course's versions and reload. A class's rejudgings
// are read by its staff and started, applied or cancelled by its instructors; administrators also
// have /api/rejudgings for any class or all of them, and reload the course.
#include <fmt/format.h>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/classroom.h"
#include "serve/dispatcher.h"
#include "serve/rejudging.h"

namespace cudojo {

using api_internal::parse_id;
using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

std::string describe_filter(const RejudgeFilter& filter, const std::string& reason) {
  std::string text = "started a rejudging";
  if (filter.stage) text += " of " + *filter.stage;
  if (filter.verdict) text += ", verdict " + *filter.verdict;
  if (filter.learner_id) text += fmt::format(", learner {}", *filter.learner_id);
  if (filter.not_version) text += ", judged under older versions";
  if (!reason.empty()) text += ": " + reason;
  return text;
}

}  // namespace

void Api::start_rejudging(const Request& request, Response& response, std::optional<std::int64_t> class_id,
                          const Actor& actor) {
  json body = request.body.empty() ? json::object() : json::parse(request.body, nullptr, false);
  if (!class_id && body.is_object() && body.contains("class")) {
    // Administrators name one class in the body, or leave it out for every class.
    if (!body["class"].is_number_integer()) return send_error(response, 400, "class is a class's id");
    class_id = body["class"].get<std::int64_t>();
    if (!store_.classes().find_class(*class_id)) return send_error(response, 404, "no such class");
    body.erase("class");
  }
  const auto course = course_.current();
  auto parsed = parse_rejudge_request(body.is_discarded() ? json(nullptr) : body, *course);
  if (auto* problem = std::get_if<std::string>(&parsed)) return send_error(response, 400, *problem);
  RejudgeRequest& wanted = std::get<RejudgeRequest>(parsed);
  wanted.filter.class_id = class_id;
  if (!store_usable(request, response)) return;
  try {
    const Rejudging made = store_.rejudgings().create_rejudging(
        wanted.filter, filter_text(wanted.filter), wanted.reason, limits_.max_jobs_per_rejudging,
        {actor, class_id, "rejudging.create", describe_filter(wanted.filter, wanted.reason)});
    dispatcher_.notify();
    send_json(response, 201, rejudging_json(made));
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::show_rejudging(const Request& request, Response& response, const Rejudging& rejudging) {
  const bool with_items = request.param("items").value_or("") == "all";
  send_json(response, 200,
            rejudging_detail_json(rejudging, store_.rejudgings().rejudging_items(rejudging.id), with_items));
}

void Api::end_rejudging(const Request& request, Response& response, const Rejudging& rejudging,
                        const Actor& actor, bool apply) {
  if (!store_usable(request, response)) return;
  try {
    const AuditNote note{actor, rejudging.class_id, apply ? "rejudging.apply" : "rejudging.cancel",
                         fmt::format("{} rejudging {} ({} jobs)", apply ? "applied" : "cancelled",
                                     rejudging.id, rejudging.jobs)};
    const auto ended = apply ? store_.rejudgings().apply_rejudging(rejudging.id, note)
                             : store_.rejudgings().cancel_rejudging(rejudging.id, note);
    if (!ended) return send_error(response, 404, "no such rejudging");
    send_json(response, 200, rejudging_json(*ended));
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

// The rejudging named by the route's second capture, if it belongs to the class of the first.
std::optional<Rejudging> Api::class_rejudging(const Request& request, Response& response,
                                              std::int64_t class_id) {
  const auto id = parse_id(request.match(2));
  auto rejudging = id ? store_.rejudgings().find_rejudging(*id) : std::nullopt;
  if (!rejudging || rejudging->class_id != class_id) {
    send_error(response, 404, "no such rejudging in this class");
    return std::nullopt;
  }
  return rejudging;
}

void Api::list_class_rejudgings(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  json list = json::array();
  for (const Rejudging& rejudging : store_.rejudgings().list_rejudgings(found->class_info.id))
    list.push_back(rejudging_json(rejudging));
  send_json(response, 200, {{"rejudgings", list}});
}

void Api::create_class_rejudging(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  start_rejudging(request, response, found->class_info.id, found->actor());
}

void Api::get_class_rejudging(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  if (const auto rejudging = class_rejudging(request, response, found->class_info.id))
    show_rejudging(request, response, *rejudging);
}

void Api::apply_class_rejudging(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  if (const auto rejudging = class_rejudging(request, response, found->class_info.id))
    end_rejudging(request, response, *rejudging, found->actor(), true);
}

void Api::cancel_class_rejudging(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  if (const auto rejudging = class_rejudging(request, response, found->class_info.id))
    end_rejudging(request, response, *rejudging, found->actor(), false);
}

void Api::class_versions(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  send_json(response, 200, versions_json(found->class_info.id));
}

json Api::versions_json(std::optional<std::int64_t> class_id) {
  const auto course = course_.current();
  std::map<std::string, json> by_stage;
  for (const Stage& stage : course->stages) {
    const StageVersion& version = course->versions.at(stage.id);
    by_stage[stage.id] = {{"stage", stage.id},
                          {"current", version.digest},
                          {"stage_files", version.stage_files},
                          {"calibration", version.calibration},
                          {"current_jobs", 0},
                          {"older_jobs", 0},
                          {"older_versions", json::array()}};
  }
  for (const StageVersionCount& count : store_.rejudgings().stage_versions(class_id)) {
    auto found = by_stage.find(count.stage);
    if (found == by_stage.end()) continue;  // a stage no longer in the course
    json& stage = found->second;
    if (count.version && *count.version == stage["current"].get<std::string>()) {
      stage["current_jobs"] = count.jobs;
      continue;
    }
    stage["older_jobs"] = stage["older_jobs"].get<std::int64_t>() + count.jobs;
    stage["older_versions"].push_back(
        {{"version", count.version ? json(*count.version) : json(nullptr)}, {"jobs", count.jobs}});
  }
  json stages = json::array();
  for (const Stage& stage : course->stages) stages.push_back(by_stage.at(stage.id));
  return {{"generation", course->generation}, {"loaded_at", course->loaded_at}, {"stages", stages}};
}

void Api::list_rejudgings(const Request& request, Response& response) {
  if (!staff_or_refuse(request, response, true)) return;
  json list = json::array();
  for (const Rejudging& rejudging : store_.rejudgings().list_rejudgings(std::nullopt))
    list.push_back(rejudging_json(rejudging));
  send_json(response, 200, {{"rejudgings", list}});
}

void Api::create_rejudging(const Request& request, Response& response) {
  const auto admin = staff_or_refuse(request, response, true);
  if (!admin) return;
  start_rejudging(request, response, std::nullopt, staff_actor(*admin, std::nullopt));
}

void Api::get_rejudging(const Request& request, Response& response) {
  if (!staff_or_refuse(request, response, true)) return;
  const auto id = parse_id(request.match(1));
  const auto rejudging = id ? store_.rejudgings().find_rejudging(*id) : std::nullopt;
  if (!rejudging) return send_error(response, 404, "no such rejudging");
  show_rejudging(request, response, *rejudging);
}

void Api::end_any_rejudging(const Request& request, Response& response, bool apply) {
  const auto admin = staff_or_refuse(request, response, true);
  if (!admin) return;
  const auto id = parse_id(request.match(1));
  const auto rejudging = id ? store_.rejudgings().find_rejudging(*id) : std::nullopt;
  if (!rejudging) return send_error(response, 404, "no such rejudging");
  end_rejudging(request, response, *rejudging, staff_actor(*admin, rejudging->class_id), apply);
}

void Api::apply_rejudging(const Request& request, Response& response) {
  end_any_rejudging(request, response, true);
}

void Api::cancel_rejudging(const Request& request, Response& response) {
  end_any_rejudging(request, response, false);
}

void Api::course_versions(const Request& request, Response& response) {
  if (!staff_or_refuse(request, response, true)) return;
  send_json(response, 200, versions_json(std::nullopt));
}

void Api::reload_course(const Request& request, Response& response) {
  const auto admin = staff_or_refuse(request, response, true);
  if (!admin) return;
  if (course_.root().empty())
    return send_error(response, 409, "this server was started without a course folder");
  const CourseReload reload = course_.reload();
  try {
    store_.classes().record(
        {staff_actor(*admin, std::nullopt), std::nullopt, "course.reload", reload.message});
  } catch (const StoreError& error) {
    // The course is replaced (or refused) whatever the log says: the answer must tell which.
    fmt::print(stderr, "cudojo serve: the course reload could not be recorded in the audit log: {}\n",
               error.what());
  }
  fmt::print(reload.replaced ? stdout : stderr, "cudojo serve: {}\n", reload.message);
  send_json(response, reload.replaced ? 200 : 422,
            {{"replaced", reload.replaced},
             {"message", reload.message},
             {"problems", reload.problems},
             {"changed", reload.changed},
             {"removed", reload.removed},
             {"generation", course_.current()->generation}});
}

}  // namespace cudojo

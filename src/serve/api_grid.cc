// A class's progress grid and its exports, for the class's staff, and its deadlines, set and cleared
// by its instructors. The grid is built by serve/classroom (one query over the finished jobs, the
// roster and the deadlines), the same one `cudojo class export` prints.
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/store_internal.h"

namespace cudojo {

using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

// How long the route's own work took, for Server-Timing (what scripts/class-bench.sh reads).
class RouteClock {
 public:
  std::string header(const char* name) const {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    return fmt::format("{};dur={:.1f}", name, ms);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

void Api::class_grid(const Request& request, Response& response) {
  const RouteClock clock;
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  const auto course = course_.current();  // kept while its stages are used
  const ClassGrid grid =
      build_grid(store_.classes(), course->stages, found->class_info, store_internal::now_seconds());
  const std::string body = json_text(grid_json(grid));
  response.set_header("Server-Timing", clock.header("grid"));
  response.set_header("Cache-Control", "no-store");
  response.status = 200;
  response.set_content(body, "application/json");
}

void Api::class_export(const Request& request, Response& response) {
  const RouteClock clock;
  const auto found = class_for(request, response, ClassAccess::kRead);
  if (!found) return;
  const std::string format = request.param("format").value_or("csv");
  if (format != "csv" && format != "json")
    return send_error(response, 400, "format is csv (the default) or json");
  if (!store_usable(request, response)) return;
  const double now = store_internal::now_seconds();
  const auto course = course_.current();  // kept while its stages are used
  const ClassGrid grid = build_grid(store_.classes(), course->stages, found->class_info, now);
  // Who took the class's grades, and when, is part of the record: once per person and class in ten
  // minutes, so that a loop of exports cannot push every other entry off the log's pages.
  if (export_worth_recording(found->actor(), found->class_info.id)) {
    store_.classes().record(
        {found->actor(), found->class_info.id, "grid.export",
         fmt::format("exported the progress of {} learners as {}", grid.rows.size(), format)});
  }
  const std::string date = iso_time(now).substr(0, 10);
  response.set_header("Content-Disposition", fmt::format("attachment; filename=\"class-{}-progress-{}.{}\"",
                                                         found->class_info.id, date, format));
  response.set_header("Cache-Control", "no-store");
  response.status = 200;
  if (format == "json") {
    response.set_content(json_text(grid_json(grid), 2), "application/json");
  } else {
    response.set_content(grid_csv(grid), "text/csv; charset=utf-8");
  }
  response.set_header("Server-Timing", clock.header("export"));
}

bool Api::export_worth_recording(const Actor& actor, std::int64_t class_id) {
  std::lock_guard lock(exports_mutex_);
  const auto now = std::chrono::steady_clock::now();
  auto& last = last_export_recorded_[{actor.kind + "/" + std::to_string(actor.id), class_id}];
  if (last != std::chrono::steady_clock::time_point{} && now - last < std::chrono::minutes(10)) return false;
  last = now;
  return true;
}

void Api::set_deadline(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto course = course_.current();  // kept while its stages are used
  const Stage* stage = find_stage(course->stages, request.match(2));
  if (!stage) return send_error(response, 404, fmt::format("no stage '{}'", request.match(2)));
  json body = json::parse(request.body, nullptr, false);
  const char* shape =
      "send {\"due_at\": \"2026-12-15T23:59:00Z\" (ISO 8601 with its zone, or seconds since 1970), "
      "\"hide_leaderboard\": false}";
  if (body.is_discarded() || !body.is_object() || !body.contains("due_at"))
    return send_error(response, 400, shape);
  for (const auto& item : body.items()) {
    if (item.key() != "due_at" && item.key() != "hide_leaderboard") return send_error(response, 400, shape);
  }
  Deadline deadline;
  deadline.stage = stage->id;
  const json& due = body["due_at"];
  std::optional<double> due_at;
  if (due.is_string()) due_at = parse_time(due.get<std::string>());
  if (due.is_number()) due_at = due.get<double>();
  // Between 1970 and 9999: a time a person meant, and one iso_time can print.
  if (!due_at || !std::isfinite(*due_at) || *due_at <= 0 || *due_at >= 253402300800.0)
    return send_error(response, 400, shape);
  deadline.due_at = *due_at;
  if (body.contains("hide_leaderboard")) {
    if (!body["hide_leaderboard"].is_boolean()) return send_error(response, 400, shape);
    deadline.hide_leaderboard = body["hide_leaderboard"].get<bool>();
  }
  if (!store_usable(request, response)) return;
  try {
    store_.classes().set_deadline(
        found->class_info.id, deadline,
        {found->actor(), found->class_info.id, "deadline.set",
         fmt::format("set the deadline of {} to {}{}", stage->id, iso_time(deadline.due_at),
                     deadline.hide_leaderboard ? ", its leaderboard hidden until then" : "")});
    send_json(response, 200,
              {{"stage", deadline.stage},
               {"due_at", deadline.due_at},
               {"hide_leaderboard", deadline.hide_leaderboard}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::clear_deadline(const Request& request, Response& response) {
  const auto found = class_for(request, response, ClassAccess::kChange);
  if (!found) return;
  const auto course = course_.current();  // kept while its stages are used
  const Stage* stage = find_stage(course->stages, request.match(2));
  if (!stage) return send_error(response, 404, fmt::format("no stage '{}'", request.match(2)));
  if (!store_usable(request, response)) return;
  try {
    const bool cleared =
        store_.classes().clear_deadline(found->class_info.id, stage->id,
                                        {found->actor(), found->class_info.id, "deadline.clear",
                                         fmt::format("cleared the deadline of {}", stage->id)});
    send_json(response, 200, {{"stage", stage->id}, {"cleared", cleared}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

}  // namespace cudojo

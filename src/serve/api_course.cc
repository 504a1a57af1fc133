// Routes anyone may call: the server's health and nodes, the course's stages and lessons, and the
// stages' leaderboards (a class's learners who opted in; the caller's own class, or the default one).
#include <fmt/format.h>

#include "serve/api.h"
#include "serve/api_internal.h"
#include "serve/dispatcher.h"
#include "serve/job_json.h"
#include "serve/markdown.h"
#include "serve/store_internal.h"
#include "stage/stage_json.h"

namespace cudojo {

using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

void Api::health(const Request&, Response& response) {
  json health = {
      {"store", std::string(store_.kind())}, {"node", node_.name}, {"host", node_.host}, {"gpu", node_.gpu},
      {"workers", dispatcher_.workers()},    {"gpus", gpus_}};
  // A node whose store is away keeps serving pages and lessons, and says so here (503, so a load
  // balancer sends learners to a node that can take their submissions). What is wrong is said in
  // a fixed sentence; the store's own words are in the server's log.
  if (auto problem = store_.problem()) {
    health["ok"] = false;
    health["database"] = "failing";
    health["error"] = "the database is gone or does not answer; the server's log says why";
    return send_json(response, 503, health);
  }
  if (auto failure = store_.write_failure()) {
    health["ok"] = false;
    health["database"] = "failing";
    health["error"] = "the database refuses writes (is its disk full?); the server's log says why";
    health["failing_since"] = failure->since;
    return send_json(response, 503, health);
  }
  health["open_sign_up"] = open_sign_up_;
  health["profiling"] = profiling_;
  health["ok"] = true;
  health["database"] = "ok";
  health["pending"] = store_.pending_count();
  send_json(response, 200, health);
}

void Api::list_nodes(const Request&, Response& response) {
  json list = json::array();
  for (const NodeInfo& node : store_.nodes(limits_.node_listed_seconds)) {
    list.push_back({{"name", node.name},
                    {"host", node.host},
                    {"gpu", node.gpu},
                    {"workers", node.workers},
                    {"http", node.http},
                    {"started_at", node.started_at},
                    {"last_seen", node.last_seen}});
  }
  send_json(response, 200, list);
}

void Api::list_stages(const Request&, Response& response) {
  json list = json::array();
  const auto course = course_.current();  // kept while its stages are used
  for (const auto& stage : course->stages) list.push_back(stage_summary_json(stage));
  send_json(response, 200, list);
}

void Api::get_stage(const Request& request, Response& response) {
  const auto course = course_.current();  // kept while its stages are used
  const Stage* stage = find_stage(course->stages, request.match(1));
  if (!stage) return send_error(response, 404, fmt::format("no stage '{}'", request.match(1)));
  // The same description `cudojo show --json` prints, with the lesson's figures from the GPU that
  // judges here (serve/markdown.h); only the HTML needs the server.
  json detail = stage_description_json(*stage);
  const LessonFigures figures =
      fill_lesson_figures(*stage, CourseCatalog::figure_sources(*course, judging_gpu()));
  detail["lesson_markdown"] = figures.markdown;
  detail["lesson_html"] = markdown_to_html(figures.markdown);
  if (!figures.note.empty()) {
    detail["lesson_figures"] = {{"gpu", figures.gpu.empty() ? json(nullptr) : json(figures.gpu)},
                                {"calibrated_on", figures.calibrated_on},
                                {"example", figures.example}};
  }
  send_json(response, 200, detail);
}

std::string Api::judging_gpu() {
  if (!node_.gpu.empty() && node_.gpu != "none") return node_.gpu;
  // A node without GPUs (a web front of a cluster): the judging nodes' GPU, as they registered it.
  // Lessons are served while the store is away, so a failing store only loses this detail.
  try {
    for (const NodeInfo& node : store_.nodes(limits_.node_listed_seconds)) {
      if (node.workers > 0 && !node.gpu.empty() && node.gpu != "none") return node.gpu;
    }
  } catch (const std::exception&) {
  }
  return "";
}

std::optional<ClassInfo> Api::leaderboard_class(const Request& request, Response& response,
                                                bool& sees_hidden) {
  sees_hidden = false;
  Caller who = caller(request);
  if (who.learner) return store_.classes().find_class(who.learner->class_id);
  if (who.staff) {
    if (const auto asked = request.param("class")) {
      const auto id = api_internal::parse_id(*asked);
      const bool allowed = id && class_access(*who.staff, *id) != ClassAccess::kNone;
      auto found = allowed ? store_.classes().find_class(*id) : std::nullopt;
      if (!found) send_error(response, 404, "no such class among yours");
      sees_hidden = found.has_value();
      return found;
    }
    sees_hidden = who.staff->admin;
  }
  return store_.classes().default_class();
}

void Api::stage_leaderboard(const Request& request, Response& response) {
  const auto course = course_.current();  // kept while its stages are used
  const Stage* stage = find_stage(course->stages, request.match(1));
  if (!stage) return send_error(response, 404, fmt::format("no stage '{}'", request.match(1)));
  bool sees_hidden = false;
  const auto class_info = leaderboard_class(request, response, sees_hidden);
  if (!class_info) return;
  json board = {{"stage", stage->id}, {"class", {{"id", class_info->id}, {"name", class_info->name}}}};
  // A board kept hidden until its deadline shows its learners nothing before then; staff see it.
  for (const Deadline& deadline : store_.classes().deadlines(class_info->id)) {
    if (deadline.stage == stage->id && deadline.hide_leaderboard && !sees_hidden &&
        store_internal::now_seconds() < deadline.due_at) {
      board["entries"] = json::array();
      board["hidden_until"] = deadline.due_at;
      return send_json(response, 200, board);
    }
  }
  json entries = json::array();
  int rank = 0;
  // The caller's own row is marked for them alone: no learner id ever leaves the server.
  const auto me = caller(request).learner;
  for (const auto& entry : store_.leaderboard(class_info->id, stage->id, limits_.leaderboard_limit)) {
    entries.push_back({{"rank", ++rank},
                       {"name", entry.name},
                       {"time_ratio", entry.time_ratio},
                       {"time_ms", optional_json(entry.time_ms)},
                       {"language", entry.language},
                       {"gpu", entry.gpu ? json(*entry.gpu) : json(nullptr)},
                       {"mine", me && me->id == entry.learner_id},
                       {"at", static_cast<std::int64_t>(entry.at)}});
  }
  board["entries"] = entries;
  send_json(response, 200, board);
}

}  // namespace cudojo

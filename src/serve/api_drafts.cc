// A learner's drafts, kept on the server: one per stage and language, the learner's own only. The
// page saves the editor's text here as the learner types (a while after the last key) and reads it
// back on any computer, so a draft follows its learner and never shows to the next person at a
// shared one. Each is bounded like a submission (the source limit), and only a stage the course has,
// in a language that stage offers, has a draft: a learner holds at most stages x languages of them.
#include <fmt/format.h>

#include "serve/api.h"
#include "serve/api_internal.h"

namespace cudojo {

using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

// The stage and language a draft route names, checked against the course; nullopt after answering
// 404 itself.
std::optional<std::pair<std::string, std::string>> draft_place(const std::vector<Stage>& course,
                                                               const http::Request& request,
                                                               http::Response& response) {
  const Stage* stage = find_stage(course, request.match(1));
  if (!stage) {
    send_error(response, 404, fmt::format("no stage '{}'", request.match(1)));
    return std::nullopt;
  }
  const auto language = parse_language(request.match(2));
  if (!language || !stage->starter(*language)) {
    send_error(response, 404, fmt::format("stage {} has no language '{}'", stage->id, request.match(2)));
    return std::nullopt;
  }
  return std::make_pair(stage->id, std::string(to_string(*language)));
}

}  // namespace

bool Api::take_draft_save(std::int64_t learner_id, Response& response) {
  std::lock_guard lock(draft_saves_mutex_);
  const auto now = std::chrono::steady_clock::now();
  // Learners idle for a minute are forgotten, so the table holds only the last minute's.
  if (draft_saves_.size() > 10'000) {
    std::erase_if(draft_saves_, [&](const auto& entry) {
      return entry.second.empty() || now - entry.second.back() > std::chrono::minutes(1);
    });
  }
  auto& saves = draft_saves_[learner_id];
  while (!saves.empty() && now - saves.front() > std::chrono::minutes(1)) saves.pop_front();
  if (static_cast<int>(saves.size()) >= limits_.max_draft_saves_per_minute) {
    response.set_header("Retry-After", "60");
    send_error(response, 429,
               fmt::format(
                   "{} drafts saved in the last minute, the limit; keep typing, the page saves again shortly",
                   limits_.max_draft_saves_per_minute));
    return false;
  }
  saves.push_back(now);
  return true;
}

void Api::list_drafts(const Request& request, Response& response) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
  std::optional<std::string> stage;
  if (const auto asked = request.param("stage")) {
    const auto course = course_.current();  // kept while its stages are used
    const Stage* found = find_stage(course->stages, *asked);
    if (!found) return send_error(response, 400, fmt::format("no stage '{}'", *asked));
    stage = found->id;
  }
  json drafts = json::array();
  for (const Draft& draft : store_.classes().drafts(learner->id, stage)) {
    drafts.push_back({{"stage", draft.stage},
                      {"language", draft.language},
                      {"source", draft.source},
                      {"updated_at", draft.updated_at}});
  }
  response.set_header("Cache-Control", "no-store");
  send_json(response, 200, {{"drafts", drafts}});
}

void Api::put_draft(const Request& request, Response& response) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
  const auto course = course_.current();  // kept while its stages are used
  const auto place = draft_place(course->stages, request, response);
  if (!place) return;
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("source") || !body["source"].is_string())
    return send_error(response, 400, "send {\"source\": \"...\"}");
  Draft draft{place->first, place->second, body["source"].get<std::string>(), 0};
  if (auto too_large = source_size_error(draft.source.size(), judge_limits_))
    return send_error(response, 413, *too_large);
  if (draft.source.find('\0') != std::string::npos)
    return send_error(response, 400, "the source holds a NUL character (\\u0000); no compiler takes one");
  if (!take_draft_save(learner->id, response)) return;
  if (!store_usable(request, response)) return;
  try {
    const double saved_at = store_.classes().save_draft(learner->id, draft);
    send_json(response, 200,
              {{"stage", draft.stage}, {"language", draft.language}, {"updated_at", saved_at}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

void Api::delete_draft(const Request& request, Response& response) {
  const auto learner = learner_or_refuse(request, response);
  if (!learner) return;
  const auto course = course_.current();  // kept while its stages are used
  const auto place = draft_place(course->stages, request, response);
  if (!place) return;
  if (!take_draft_save(learner->id, response)) return;
  if (!store_usable(request, response)) return;
  try {
    const bool deleted = store_.classes().delete_draft(learner->id, place->first, place->second);
    send_json(response, 200, {{"stage", place->first}, {"language", place->second}, {"deleted", deleted}});
  } catch (const StoreError& error) {
    answer_store_error(request, response, error);
  }
}

}  // namespace cudojo

#include "serve/rejudging.h"

#include <cmath>

#include "report/verdict.h"
#include "serve/classroom.h"
#include "serve/job_json.h"

namespace cudojo {

using nlohmann::json;

namespace {

std::string verdict_or_none(const std::optional<std::string>& verdict) { return verdict.value_or("none"); }

json optional_text_json(const std::optional<std::string>& text) { return text ? json(*text) : json(nullptr); }

json item_json(const RejudgeItem& item) {
  const bool finished = item.rerun_state == JobState::kDone;
  return {{"job", item.job_id},
          {"rerun", item.rerun_id},
          {"learner", {{"id", item.learner_id}, {"name", item.learner_name}}},
          {"stage", item.stage},
          {"language", item.language},
          {"submitted_at", item.submitted_at},
          {"rerun_state", std::string(to_string(item.rerun_state))},
          {"before",
           {{"verdict", optional_text_json(item.before_verdict)},
            {"ratio", optional_json(item.before_ratio)},
            {"stage_version", optional_text_json(item.before_version)}}},
          {"after", finished ? json{{"verdict", optional_text_json(item.after_verdict)},
                                    {"ratio", optional_json(item.after_ratio)},
                                    {"stage_version", optional_text_json(item.after_version)}}
                             : json(nullptr)},
          {"flips", finished && item.before_verdict != item.after_verdict}};
}

}  // namespace

RejudgeSummary summarize(const std::vector<RejudgeItem>& items) {
  RejudgeSummary summary;
  summary.jobs = static_cast<std::int64_t>(items.size());
  for (const RejudgeItem& item : items) {
    if (item.rerun_state != JobState::kDone) continue;
    ++summary.judged;
    ++summary.matrix[{verdict_or_none(item.before_verdict), verdict_or_none(item.after_verdict)}];
    if (item.before_verdict != item.after_verdict) {
      ++summary.flipped;
      summary.flips.push_back(&item);
    }
  }
  return summary;
}

json rejudging_json(const Rejudging& rejudging) {
  json filter = json::parse(rejudging.filter, nullptr, false);
  if (filter.is_discarded()) filter = rejudging.filter;
  return {{"id", rejudging.id},
          {"class_id", rejudging.class_id ? json(*rejudging.class_id) : json(nullptr)},
          {"created_by", {{"kind", rejudging.created_by.kind}, {"name", rejudging.created_by.name}}},
          {"created_at", rejudging.created_at},
          {"filter", filter},
          {"reason", rejudging.reason},
          {"state", std::string(to_string(rejudging.state))},
          {"ended_at", optional_json(rejudging.ended_at)},
          {"jobs", rejudging.jobs},
          {"judged", rejudging.judged}};
}

json rejudging_detail_json(const Rejudging& rejudging, const std::vector<RejudgeItem>& items,
                           bool with_items) {
  const RejudgeSummary summary = summarize(items);
  json matrix = json::array();
  for (const auto& [verdicts, count] : summary.matrix)
    matrix.push_back({{"before", verdicts.first}, {"after", verdicts.second}, {"jobs", count}});
  json flips = json::array();
  for (const RejudgeItem* item : summary.flips) flips.push_back(item_json(*item));
  json shown = rejudging_json(rejudging);
  shown["summary"] = {
      {"jobs", summary.jobs}, {"judged", summary.judged}, {"flipped", summary.flipped}, {"matrix", matrix}};
  shown["flips"] = flips;
  if (with_items) {
    json all = json::array();
    for (const RejudgeItem& item : items) all.push_back(item_json(item));
    shown["items"] = all;
  }
  return shown;
}

std::variant<RejudgeRequest, std::string> parse_rejudge_request(const json& body,
                                                                const LoadedCourse& course) {
  const std::string shape =
      "send {\"stage\": \"reduction/3\", \"learner\": 12, \"verdict\": \"accepted\", \"since\": "
      "\"2026-12-01T00:00:00Z\", \"until\": ..., \"older_versions\": true, \"reason\": \"...\"}, every key "
      "optional";
  if (!body.is_object()) return shape;
  RejudgeRequest wanted;
  for (const auto& [key, value] : body.items()) {
    if (key == "stage") {
      if (!value.is_string()) return "stage is a stage id, such as \"reduction/3\"";
      const Stage* stage = find_stage(course.stages, value.get<std::string>());
      if (!stage) return "no stage '" + value.get<std::string>() + "' in the course";
      wanted.filter.stage = stage->id;
    } else if (key == "learner") {
      if (!value.is_number_integer() || value.get<std::int64_t>() <= 0) return "learner is a learner's id";
      wanted.filter.learner_id = value.get<std::int64_t>();
    } else if (key == "verdict") {
      if (!value.is_string() || !parse_verdict(value.get<std::string>()))
        return "verdict is one of the verdicts of docs/verdicts.md, such as \"accepted\"";
      wanted.filter.verdict = value.get<std::string>();
    } else if (key == "since" || key == "until") {
      std::optional<double> at;
      if (value.is_string()) at = parse_time(value.get<std::string>());
      if (value.is_number()) at = value.get<double>();
      if (!at || !std::isfinite(*at) || *at < 0 || *at >= 253402300800.0)
        return key + " is a time: ISO 8601 with its zone (2026-12-01T09:00:00Z) or seconds since 1970";
      (key == "since" ? wanted.filter.since : wanted.filter.until) = *at;
    } else if (key == "older_versions") {
      if (!value.is_boolean()) return "older_versions is true or false";
      if (value.get<bool>()) wanted.filter.not_version = "";  // named once the stage is known
    } else if (key == "reason") {
      if (!value.is_string() || value.get<std::string>().size() > 500)
        return "reason is text of up to 500 bytes";
      wanted.reason = value.get<std::string>();
    } else {
      return "unknown key '" + key + "': " + shape;
    }
  }
  if (wanted.filter.not_version) {
    if (!wanted.filter.stage) return "older_versions needs a stage: versions are a stage's own";
    wanted.filter.not_version = course.versions.at(*wanted.filter.stage).digest;
  }
  if (wanted.filter.since && wanted.filter.until && *wanted.filter.since >= *wanted.filter.until)
    return "since must come before until";
  return wanted;
}

std::string filter_text(const RejudgeFilter& filter) {
  json shown = json::object();
  if (filter.class_id) shown["class"] = *filter.class_id;
  if (filter.stage) shown["stage"] = *filter.stage;
  if (filter.learner_id) shown["learner"] = *filter.learner_id;
  if (filter.verdict) shown["verdict"] = *filter.verdict;
  if (filter.since) shown["since"] = *filter.since;
  if (filter.until) shown["until"] = *filter.until;
  if (filter.not_version) shown["not_version"] = *filter.not_version;
  return shown.dump();
}

}  // namespace cudojo

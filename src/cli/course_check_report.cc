#include "cli/course_check_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "stage/authoring_checks.h"

namespace cudojo::cli {

namespace {

namespace fs = std::filesystem;

// Relative to the current folder when under it (so editors can open file:line), else as it is.
std::string shown_path(const fs::path& path) {
  std::error_code error;
  const fs::path here = fs::current_path(error);
  const fs::path relative = path.lexically_relative(here);
  if (!error && !relative.empty() && *relative.begin() != "..") return relative.string();
  return path.string();
}

nlohmann::json problem_json(const Finding& finding, const fs::path& root) {
  const StageProblem& problem = finding.problem;
  return {{"file", problem.file.lexically_relative(root).string()},
          {"line", problem.line},
          {"key", problem.key},
          {"severity", problem.warning ? "warning" : "error"},
          {"check", finding.check},
          {"message", problem.message}};
}

std::string problem_line(const Finding& finding) {
  const StageProblem& problem = finding.problem;
  return fmt::format("  {}{}{}: {}\n", problem.warning ? "warning: " : "", shown_path(problem.file),
                     problem.line > 0 ? fmt::format(":{}", problem.line) : "", problem.message);
}

std::string plural(int n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

CourseCheckCounts count_findings(const CourseCheckResult& result) {
  CourseCheckCounts counts;
  auto count = [&](const Finding& finding) {
    (finding.problem.warning ? counts.warnings : counts.errors) += 1;
    if (finding.check == "todo") ++counts.todos;
  };
  for (const auto& finding : result.course_problems) count(finding);
  for (const Entry& entry : result.entries) {
    for (const auto& finding : entry.problems) count(finding);
    counts.compiled += static_cast<int>(entry.compiled.size());
    counts.judged += static_cast<int>(entry.judged.size());
    counts.broken += entry.stage ? 0 : 1;
  }
  return counts;
}

nlohmann::json course_check_json(const CourseCheckResult& result) {
  const fs::path& root = result.root;
  nlohmann::json stages = nlohmann::json::array();
  for (const Entry& entry : result.entries) {
    const bool declared = entry.stage && !entry.stage->expected_starter_verdict.empty();
    nlohmann::json item = {{"id", entry.id},
                           {"folder", entry.directory.lexically_relative(root).string()},
                           {"broken", entry.stage == nullptr},
                           {"expect_starter", declared ? nlohmann::json(entry.stage->expected_starter_verdict)
                                                       : nlohmann::json()},
                           {"problems", nlohmann::json::array()},
                           {"compiled", nlohmann::json::array()}};
    for (const auto& finding : entry.problems) item["problems"].push_back(problem_json(finding, root));
    for (const auto& c : entry.compiled) {
      item["compiled"].push_back({{"file", c.file.lexically_relative(root).string()},
                                  {"language", to_string(c.language)},
                                  {"role", c.role},
                                  {"ok", c.ok},
                                  {"compile_ms", c.compile_ms}});
    }
    if (result.gpu) {
      item["judged"] = nlohmann::json::array();
      for (const auto& j : entry.judged) {
        item["judged"].push_back({{"file", j.file.lexically_relative(root).string()},
                                  {"language", to_string(j.language)},
                                  {"role", j.role},
                                  {"expected", j.expected},
                                  {"verdict", j.verdict},
                                  {"ok", j.ok},
                                  {"message", j.message}});
      }
    }
    stages.push_back(std::move(item));
  }
  const CourseCheckCounts counts = count_findings(result);
  nlohmann::json out = {{"course", root.string()},
                        {"ok", counts.errors == 0},
                        {"gpu", result.gpu},
                        {"stages", stages},
                        {"course_problems", nlohmann::json::array()},
                        {"skipped", nlohmann::json::array()}};
  for (const auto& finding : result.course_problems)
    out["course_problems"].push_back(problem_json(finding, root));
  for (const auto& [language, tool] : result.tools) {
    if (!tool.ok) out["skipped"].push_back({{"language", to_string(language)}, {"reason", tool.reason}});
  }
  out["summary"] = {{"stages", result.entries.size()},
                    {"broken", counts.broken},
                    {"errors", counts.errors},
                    {"warnings", counts.warnings},
                    {"todo_markers", counts.todos},
                    {"compiled", counts.compiled},
                    {"judged", counts.judged},
                    {"threads", result.threads},
                    {"wall_ms", std::round(result.wall_ms)}};
  return out;
}

std::string course_check_text(const CourseCheckResult& result) {
  std::string text;
  if (!result.course_problems.empty()) text += fmt::format("course ({})\n", shown_path(result.root));
  for (const auto& finding : result.course_problems) text += problem_line(finding);
  for (const Entry& entry : result.entries) {
    const bool failing = std::any_of(entry.problems.begin(), entry.problems.end(),
                                     [](const Finding& f) { return !f.problem.warning; });
    std::string done = fmt::format("{} compiled", entry.compiled.size());
    if (result.gpu) done += fmt::format(", {} judged", entry.judged.size());
    text += fmt::format("{:<7} {:<14} {:<34} {}\n",
                        !entry.stage ? "BROKEN"
                        : failing    ? "FAILED"
                                     : "ok",
                        entry.id, entry.directory.lexically_relative(result.root).string(),
                        entry.stage ? done : "not compiled");
    // TODO(author) markers, one line a file: the lines to visit, not a line each.
    std::map<fs::path, std::vector<int>> todo_lines;
    for (const auto& finding : entry.problems) {
      if (finding.check == "todo") {
        todo_lines[finding.problem.file].push_back(finding.problem.line);
      } else {
        text += problem_line(finding);
      }
    }
    for (const auto& [file, lines] : todo_lines) {
      text +=
          fmt::format("  warning: {}:{}: {} (the places the author still writes)\n", shown_path(file),
                      fmt::join(lines, ","), plural(static_cast<int>(lines.size()), "TODO(author) marker"));
    }
  }
  for (const auto& [language, tool] : result.tools) {
    if (!tool.ok) text += fmt::format("skipped {}: {}\n", display_name(language), tool.reason);
  }
  const CourseCheckCounts counts = count_findings(result);
  text += fmt::format("course check: {} ({} broken), {} compiled on {}{}, {}, {} ({}); {:.1f} s\n",
                      plural(static_cast<int>(result.entries.size()), "stage"), counts.broken,
                      plural(counts.compiled, "file"), plural(static_cast<int>(result.threads), "thread"),
                      result.gpu ? fmt::format(", {} judged", counts.judged) : "",
                      plural(counts.errors, "error"), plural(counts.warnings, "warning"),
                      plural(counts.todos, "TODO(author) marker"), result.wall_ms / 1000);
  return text;
}

}  // namespace cudojo::cli

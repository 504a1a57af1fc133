// Running a class: who may do what, and the progress grid with its deadlines, as JSON and as CSV.
// What people type (codes, ids, addresses, times, rosters) is read in classroom_input.cc.
#include "serve/classroom.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "serve/store_internal.h"

namespace cudojo {

namespace {

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

}  // namespace

// ---- Who may do what

ClassAccess class_access(const StaffAccount& staff, std::int64_t class_id) {
  if (staff.admin) return ClassAccess::kChange;
  const auto role = staff.roles.find(class_id);
  if (role == staff.roles.end()) return ClassAccess::kNone;
  return role->second == ClassRole::kInstructor ? ClassAccess::kChange : ClassAccess::kRead;
}

Actor staff_actor(const StaffAccount& staff, std::optional<std::int64_t> class_id) {
  std::string kind = "staff";
  if (staff.admin) {
    kind = "admin";
  } else if (class_id) {
    if (const auto role = staff.roles.find(*class_id); role != staff.roles.end())
      kind = std::string(to_string(role->second));
  }
  return {kind, staff.id, staff.name};
}

Actor console_actor() { return {"console", 0, "the server's console"}; }

std::string csv_field(std::string_view text) {
  std::string field(text);
  if (!field.empty() && std::string_view("=+-@\t\r").find(field[0]) != std::string_view::npos)
    field.insert(0, "'");
  if (field.find_first_of(",\"\r\n") == std::string::npos && field == trimmed(field)) return field;
  std::string quoted = "\"";
  for (char c : field) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// ---- The progress grid

bool is_late(const std::vector<Deadline>& deadlines, const std::string& stage, double submitted_at) {
  return std::any_of(deadlines.begin(), deadlines.end(), [&](const Deadline& deadline) {
    return deadline.stage == stage && submitted_at > deadline.due_at;
  });
}

ClassGrid build_grid(ClassStore& store, const std::vector<Stage>& course, const ClassInfo& class_info,
                     double now) {
  ClassGrid grid;
  grid.class_info = class_info;
  grid.generated_at = now;
  for (const Stage& stage : course) grid.stages.push_back(stage.id);
  for (const Deadline& deadline : store.deadlines(class_info.id)) grid.deadlines[deadline.stage] = deadline;
  std::map<std::int64_t, std::size_t> row_of;
  for (RosterEntry& learner : store.roster(class_info.id)) {
    if (learner.removed_at) continue;
    row_of[learner.id] = grid.rows.size();
    grid.rows.push_back({std::move(learner), {}, 0, 0});
  }
  for (GridCell& cell : store.class_grid(class_info.id)) {
    const auto row = row_of.find(cell.learner_id);
    if (row == row_of.end()) continue;
    GridStatus& status = grid.rows[row->second].cells[cell.stage];
    status.status = cell.accepted ? "accepted" : "attempted";
    status.attempts = cell.attempts;
    status.best_ratio = cell.best_ratio;
    status.first_accepted_at = cell.first_accepted_at;
    status.last_submitted_at = cell.last_submitted_at;
    status.late_jobs = cell.late_jobs;
  }
  for (GridRow& row : grid.rows) {
    for (const std::string& stage : grid.stages) {
      GridStatus& status = row.cells[stage];  // a stage never tried is "new"
      const auto deadline = grid.deadlines.find(stage);
      const std::optional<double> due =
          deadline == grid.deadlines.end() ? std::nullopt : std::optional<double>(deadline->second.due_at);
      if (status.status == "accepted") {
        status.timing = due && *status.first_accepted_at > *due ? "late" : "on_time";
        ++row.accepted;
        if (status.timing == "on_time") ++row.on_time;
      } else {
        status.timing = due && now > *due ? "missing" : "open";
      }
    }
    // Cells of stages the course no longer has are not shown.
    std::erase_if(row.cells, [&](const auto& cell) {
      return std::find(grid.stages.begin(), grid.stages.end(), cell.first) == grid.stages.end();
    });
  }
  std::sort(grid.rows.begin(), grid.rows.end(), [](const GridRow& a, const GridRow& b) {
    const auto key = [](const GridRow& row) {
      return std::make_tuple(!row.learner.student_id.has_value(), row.learner.student_id.value_or(""),
                             row.learner.name);
    };
    return key(a) < key(b);
  });
  return grid;
}

nlohmann::json grid_json(const ClassGrid& grid) {
  using nlohmann::json;
  json deadlines = json::object();
  for (const auto& [stage, deadline] : grid.deadlines)
    deadlines[stage] = {{"due_at", deadline.due_at}, {"hide_leaderboard", deadline.hide_leaderboard}};
  json learners = json::array();
  for (const GridRow& row : grid.rows) {
    json cells = json::object();
    for (const auto& [stage, status] : row.cells) {
      // A stage never tried with nothing due yet is most of a class's grid early in a term: it is left
      // out, and a stage missing from "cells" means exactly that.
      if (status.status == "new" && status.timing == "open") continue;
      json cell = {{"status", status.status}, {"timing", status.timing}, {"attempts", status.attempts}};
      if (status.best_ratio) cell["best_ratio"] = *status.best_ratio;
      if (status.first_accepted_at) cell["first_accepted_at"] = *status.first_accepted_at;
      if (status.last_submitted_at) cell["last_submitted_at"] = *status.last_submitted_at;
      if (status.late_jobs > 0) cell["late_jobs"] = status.late_jobs;
      cells[stage] = std::move(cell);
    }
    learners.push_back(
        {{"id", row.learner.id},
         {"student_id", row.learner.student_id ? json(*row.learner.student_id) : json(nullptr)},
         {"name", row.learner.name},
         {"email", row.learner.email ? json(*row.learner.email) : json(nullptr)},
         {"signed_in", row.learner.signed_in_at.has_value()},
         {"accepted", row.accepted},
         {"on_time", row.on_time},
         {"cells", std::move(cells)}});
  }
  return {{"class", {{"id", grid.class_info.id}, {"name", grid.class_info.name}}},
          {"generated_at", grid.generated_at},
          {"stages", grid.stages},
          {"deadlines", std::move(deadlines)},
          {"learners", std::move(learners)}};
}

std::string grid_csv(const ClassGrid& grid) {
  std::string csv = "student_id,name,email,signed_in,accepted,on_time";
  for (const std::string& stage : grid.stages) {
    for (const char* column :
         {"status", "timing", "attempts", "late_jobs", "best_ratio", "first_accepted_at"})
      csv += "," + csv_field(fmt::format("{} {}", stage, column));
  }
  csv += "\r\n";
  for (const GridRow& row : grid.rows) {
    csv += fmt::format("{},{},{},{},{},{}", csv_field(row.learner.student_id.value_or("")),
                       csv_field(row.learner.name), csv_field(row.learner.email.value_or("")),
                       row.learner.signed_in_at ? "yes" : "no", row.accepted, row.on_time);
    for (const std::string& stage : grid.stages) {
      const GridStatus& status = row.cells.at(stage);
      csv += fmt::format(",{},{},{},{},{},{}", status.status, status.timing, status.attempts,
                         status.late_jobs, status.best_ratio ? fmt::format("{:.3f}", *status.best_ratio) : "",
                         status.first_accepted_at ? iso_time(*status.first_accepted_at) : "");
    }
    csv += "\r\n";
  }
  return csv;
}

}  // namespace cudojo

// Running a class, above the store: who may do what in a class, what people type (invite codes,
// student ids, addresses, times, a roster's CSV), and the progress grid with its deadlines applied,
// as JSON and as CSV. The API's class routes and the `cudojo admin` / `cudojo class` commands both
// call these, so a rule is written once whichever door a request comes in by.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/store.h"
#include "stage/stage.h"

namespace cudojo {

// ---- Who may do what

// What a member of staff may do in one class: an administrator or an instructor changes it, a
// teaching assistant reads it, anyone else has nothing to do with it (and is told it does not exist).
enum class ClassAccess { kNone, kRead, kChange };
ClassAccess class_access(const StaffAccount& staff, std::int64_t class_id);

// The staff member as the audit log names them when acting in `class_id` (an administrator acts as
// one everywhere).
Actor staff_actor(const StaffAccount& staff, std::optional<std::int64_t> class_id);
// The server machine's own console: `cudojo admin` and `cudojo class`, run by whoever can read the
// data folder or the store's URL.
Actor console_actor();

// ---- What people type

// An invite code as typed: upper case, with spaces and dashes dropped ("k7qm-3xd9 at" -> "K7QM3XD9AT").
std::string normalize_invite_code(std::string_view typed);
// nullopt when acceptable, else the sentence saying what is wrong. A student id is 1 to 64 letters,
// digits, '.', '_', '-' (what schools' systems export); an address has one '@', no spaces, at most
// 254 characters; a class's name is 1 to 80 characters with no control characters.
std::optional<std::string> student_id_problem(const std::string& student_id);
std::optional<std::string> email_problem(const std::string& email);
std::optional<std::string> class_name_problem(const std::string& name);

// A time as ISO 8601 with a zone ("2026-12-15T23:59:00Z", "2026-12-15T23:59+01:00"), as seconds
// since the epoch. Without a zone the time is refused, unless `local_without_zone` (the command
// line, typed on the server machine: its own zone).
std::optional<double> parse_time(std::string_view text, bool local_without_zone = false);
// Seconds since the epoch as ISO 8601 in UTC, to the second ("2026-12-15T23:59:00Z").
std::string iso_time(double seconds);

// A roster as a school's system exports it: CSV (RFC 4180: quoted fields, doubled quotes, CRLF or
// LF, an optional byte-order mark). A first row naming its columns (student id, name, email, in any
// order; "id", "student", "display name", "e-mail" are understood) is a header; without one the
// columns are student id, name, email. Blank lines are skipped. Every problem is reported with its
// line; a roster with any problem is not imported at all.
struct RosterProblem {
  int line = 0;
  std::string problem;
};
struct ParsedRoster {
  std::vector<RosterRow> rows;
  std::vector<RosterProblem> problems;
};
ParsedRoster parse_roster_csv(std::string_view text, std::size_t max_rows);

// One CSV field: quoted when it holds a comma, a quote or a line break, and, when it begins with a
// character a spreadsheet would read as a formula (= + - @, a tab or a carriage return), prefixed with
// an apostrophe so that an export opened in a spreadsheet runs nothing a learner typed.
std::string csv_field(std::string_view text);

// ---- The progress grid

// One learner's standing on one stage with the class's deadline applied. timing: "on_time" (accepted,
// by the deadline or with none), "late" (accepted only after it), "missing" (the deadline passed
// without an accepted job), "open" (not accepted, nothing due yet).
struct GridStatus {
  std::string status = "new";  // "accepted", "attempted", "new"
  std::string timing = "open";
  std::int64_t attempts = 0;
  std::optional<double> best_ratio;
  std::optional<double> first_accepted_at;
  std::optional<double> last_submitted_at;
  std::int64_t late_jobs = 0;  // finished jobs of this stage submitted after its deadline
};

struct GridRow {
  RosterEntry learner;
  std::map<std::string, GridStatus> cells;  // every stage of the course
  int accepted = 0;                         // stages accepted
  int on_time = 0;                          // of them, accepted by their deadline
};

struct ClassGrid {
  ClassInfo class_info;
  std::vector<std::string> stages;  // the course's order
  std::map<std::string, Deadline> deadlines;
  std::vector<GridRow> rows;  // learners not removed, by student id (those without last), then name
  double generated_at = 0;
};

// The grid of `class_info` now: the roster, the deadlines and one query over the finished jobs.
ClassGrid build_grid(ClassStore& store, const std::vector<Stage>& course, const ClassInfo& class_info,
                     double now);
// The grid as JSON (docs/openapi.yaml, ClassGrid): a learner's "cells" leave out the stages they never
// tried and that are not yet due.
nlohmann::json grid_json(const ClassGrid& grid);
// One row per learner, student id first; the columns are documented in docs/DEPLOY.md and
// docs/openapi.yaml (ClassExport).
std::string grid_csv(const ClassGrid& grid);

// Whether a job submitted at `submitted_at` on `stage` is late under `deadlines` (false without one).
bool is_late(const std::vector<Deadline>& deadlines, const std::string& stage, double submitted_at);

}  // namespace cudojo

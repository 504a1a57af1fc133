// The course author's subcommands, and what the learner's commands need of a course with broken
// stages: `cudojo course check` (course_check.h), `cudojo stage new` (a stage scaffolded on a
// contract), `cudojo stages` (the good stages, then the broken ones with their reasons), and the
// stage lookup that says a stage is broken, and why, instead of "no such stage".
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "stage/stage.h"

namespace cudojo::cli {

struct CourseCommands {
  CLI::App* course_check = nullptr;  // cudojo course check [STAGE...] [--gpu] [--json]
  CLI::App* stage_new = nullptr;     // cudojo stage new TRACK/NUMBER --contract NAME
  std::vector<std::string> only;
  bool gpu = false;
  std::string new_id, contract, slug, title;
};

// Registers `course check` and `stage new`; --course and --json bind the caller's own variables, so
// they may be given before or after the subcommand.
std::unique_ptr<CourseCommands> add_course_commands(CLI::App& app, std::string& course_dir, bool& json);
bool wants_course_command(const CourseCommands& commands);
// Runs the one chosen: its exit code. Throws UsageError for what the user must type differently.
int run_course_command(const CourseCommands& commands, const std::string& course_dir, bool json);

// `cudojo stages`: the good stages, then each broken one with its reasons (--json: entries with
// "broken": true after the stages' own).
int cmd_stages(const Course& course, bool json);

// The stage an id or alias names. A broken stage is a StageError saying why (the CLI's exit 2,
// "course_error"); an unknown one a UsageError listing the stages.
const Stage& require_stage(const Course& course, const std::string& id);

}  // namespace cudojo::cli

#include "cli/course_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/course_check.h"
#include "common/json_text.h"
#include "stage/authoring_checks.h"
#include "stage/contract_info.h"
#include "stage/scaffold.h"
#include "stage/stage_json.h"

namespace cudojo::cli {

namespace fs = std::filesystem;

namespace {

// Every contract with its kernel's parameters, one a line: for --help and a wrong --contract.
std::string contract_list() {
  std::string text;
  for (const auto& contract : all_contracts()) {
    text += fmt::format("\n  {:<18} {}", contract.name, contract.parameters);
    if (contract.has_second_kernel()) text += fmt::format("; then {}", contract.second.parameters);
  }
  return text;
}

nlohmann::json broken_json(const BrokenStage& broken) {
  nlohmann::json problems = nlohmann::json::array();
  for (const auto& problem : broken.problems) {
    problems.push_back({{"file", problem.file.string()},
                        {"line", problem.line},
                        {"key", problem.key},
                        {"message", problem.message}});
  }
  return {{"id", broken.label()},
          {"folder", broken.directory.string()},
          {"broken", true},
          {"reason", broken.reason()},
          {"problems", problems}};
}

// TRACK/NUMBER: a track folder's name and a stage number from 1 to 99.
std::pair<std::string, int> parse_new_id(const std::string& id) {
  const std::size_t slash = id.find('/');
  const std::string track = id.substr(0, slash);
  int number = 0;
  const char* begin = id.data() + (slash == std::string::npos ? id.size() : slash + 1);
  const auto [end, error] = std::from_chars(begin, id.data() + id.size(), number);
  const bool track_ok = !track.empty() && std::all_of(track.begin(), track.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_';
  });
  if (slash == std::string::npos || !track_ok || error != std::errc() || end != id.data() + id.size() ||
      number < 1 || number > 99) {
    throw UsageError(fmt::format(
        "stage new {}: give TRACK/NUMBER, a track folder's name (lowercase) and a number from 1 to 99, "
        "e.g. reduction/10",
        id));
  }
  return {track, number};
}

int cmd_stage_new(const CourseCommands& commands, const fs::path& root, bool json) {
  const auto [track, number] = parse_new_id(commands.new_id);
  if (!find_contract_info(commands.contract)) {
    throw UsageError(
        fmt::format("stage new: no contract '{}'. The contracts:{}", commands.contract, contract_list()));
  }
  if (!commands.slug.empty() && !std::all_of(commands.slug.begin(), commands.slug.end(), [](unsigned char c) {
        return std::islower(c) || std::isdigit(c) || c == '-';
      })) {
    throw UsageError(fmt::format("--slug {}: lowercase letters, digits and '-' only (it is part of a URL)",
                                 commands.slug));
  }
  if (!fs::is_directory(root)) {
    throw UsageError(fmt::format("course folder {} does not exist (give --course DIR)", root.string()));
  }
  const ScaffoldRequest request{track, number, commands.contract, commands.slug, commands.title};
  const std::string id = fmt::format("{}/{}", track, number);
  const Course course = load_course_report(root);  // a broken course.toml stops here, saying why
  const std::string folder_name = scaffold_folder_name(request);
  const std::string slug_id = fmt::format("{}/{}", track, folder_name.substr(folder_name.find('-') + 1));
  for (const std::string& taken : {id, slug_id}) {
    const Stage* stage = find_stage(course.stages, taken);
    const BrokenStage* broken = course.find_broken(taken);
    if (stage || broken) {
      throw UsageError(fmt::format("stage new: {} is taken by {}; choose another {}", taken,
                                   (stage ? stage->directory : broken->directory).string(),
                                   taken == id ? "number" : "--slug"));
    }
  }
  const fs::path folder = root / track / folder_name;
  std::error_code error;
  if (fs::exists(folder, error))
    throw UsageError(fmt::format("stage new: {} exists already", folder.string()));
  for (const auto& entry : fs::directory_iterator(root / track, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.find('-') != std::string::npos &&
        name.substr(0, name.find('-')).find_first_not_of("0123456789") == std::string::npos &&
        std::stoi(name.substr(0, name.find('-'))) == number) {
      throw UsageError(fmt::format("stage new: {} already holds stage number {} of {}; choose another number",
                                   entry.path().string(), number, track));
    }
  }
  const auto files = scaffold_stage(request);
  const bool new_track = !fs::exists(root / track, error);
  fs::create_directories(folder);
  for (const auto& file : files) {
    std::ofstream out(folder / file.name, std::ios::binary);
    out << file.text;
    if (!out) throw UsageError(fmt::format("stage new: cannot write {}", (folder / file.name).string()));
  }
  const std::size_t todos = find_author_todos(folder).size();
  if (json) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& file : files) names.push_back(file.name);
    std::cout << json_text(
                     {{"id", id}, {"folder", folder.string()}, {"files", names}, {"todo_markers", todos}}, 2)
              << "\n";
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(file.name);
  std::cout << fmt::format(
      "created {} ({} on the {} contract): {}\n"
      "{} places say TODO(author): the title, summary and lesson, the starters (they compile and compute\n"
      "nothing), the gate and the references (correct, but plain). `cudojo course check {}` lists them and\n"
      "checks the stage without a GPU; `cudojo course check {} --gpu` judges it on one.\n",
      folder.string(), id, commands.contract, fmt::join(names, " "), todos, id, id);
  if (new_track && fs::exists(root / "course.toml", error)) {
    std::cout << fmt::format(
        "{} is a new track: add \"{}\" to `tracks` in {} to place it (until then it comes "
        "after the tracks listed there)\n",
        track, track, (root / "course.toml").string());
  }
  return 0;
}

}  // namespace

std::unique_ptr<CourseCommands> add_course_commands(CLI::App& app, std::string& course_dir, bool& json) {
  auto commands = std::make_unique<CourseCommands>();
  const std::string course_help = "Course folder (default: $CUDOJO_COURSE or the bundled course)";
  auto* course =
      app.add_subcommand("course", "Check a course before learners meet it: `cudojo course check`");
  course->require_subcommand(1);
  auto* check = course->add_subcommand(
      "check",
      "Check every stage of the course without a GPU: stage files read strictly, every starter and reference "
      "compiled in every language (names and signatures against the contract), lessons rendered as the page "
      "renders them (links, math, diagrams, code fences), TODO(author) markers counted. Exit 0 clean, 1 "
      "problems, 2 usage error. docs/stages.md describes --json.");
  check->add_option("stage", commands->only, "Check only these stages (ids, aliases or folders)");
  check->add_flag("--gpu", commands->gpu,
                  "Also judge every reference (must be accepted) and starter (must get the verdict its "
                  "stage's [expect] starter declares) on this machine's GPU");
  check->add_flag("--json", json, "Print one JSON object (docs/stages.md) instead of text");
  check->add_option("--course", course_dir, course_help);
  commands->course_check = check;

  auto* stage = app.add_subcommand("stage", "Make a stage: `cudojo stage new TRACK/NUMBER --contract NAME`");
  stage->require_subcommand(1);
  auto* create = stage->add_subcommand(
      "new",
      "Scaffold a stage folder on a contract: stage.toml with the contract's defaults, a lesson, and a "
      "starter "
      "and a correct reference in CUDA C++, Python and Rust. It passes `cudojo course check` at once; what "
      "you still must write says TODO(author).");
  create->add_option("id", commands->new_id, "TRACK/NUMBER, e.g. reduction/10 (the folder is NN-SLUG)")
      ->required();
  create->add_option("--contract", commands->contract, "The contract the stage drives:" + contract_list())
      ->required();
  create->add_option("--slug", commands->slug, "The stage's alias (default: the contract's name)");
  create->add_option("--title", commands->title, "The stage's title (default: a TODO(author) marker)");
  create->add_option("--course", course_dir, course_help);
  create->add_flag("--json", json, "Print JSON");
  commands->stage_new = create;
  return commands;
}

bool wants_course_command(const CourseCommands& commands) {
  return *commands.course_check || *commands.stage_new;
}

int run_course_command(const CourseCommands& commands, const std::string& course_dir, bool json) {
  if (*commands.stage_new) return cmd_stage_new(commands, course_dir, json);
  return run_course_check({course_dir, commands.only, commands.gpu, json});
}

int cmd_stages(const Course& course, bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& stage : course.stages) list.push_back(stage_facts_json(stage));
    for (const auto& broken : course.broken) list.push_back(broken_json(broken));
    std::cout << json_text(list, 2) << "\n";
    return 0;
  }
  for (const auto& stage : course.stages) {
    std::cout << fmt::format("{:<13} {:<26} {}\n", stage.id, stage.slug_id(), stage.title);
    std::cout << fmt::format("{:<13} {}\n", "", stage.summary);
  }
  for (const auto& broken : course.broken) {
    std::cout << fmt::format(
        "{:<13} {:<26} BROKEN: commands on it fail until this is fixed\n", broken.label(),
        broken.slug.empty() ? "" : broken.directory.parent_path().filename().string() + "/" + broken.slug);
    for (const auto& problem : broken.problems) std::cout << fmt::format("{:<13} {}\n", "", problem.text());
  }
  return 0;
}

const Stage& require_stage(const Course& course, const std::string& id) {
  if (const Stage* stage = find_stage(course.stages, id)) return *stage;
  if (const BrokenStage* broken = course.find_broken(id)) {
    throw StageError(
        fmt::format("{} is broken, so it cannot be used until its files are fixed "
                    "(`cudojo course check {}` checks them):\n{}",
                    broken->label(), broken->label(), broken->reason()));
  }
  return require_stage(course.stages, id);
}

}  // namespace cudojo::cli

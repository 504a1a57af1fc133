#include "cli/rejudge_commands.h"

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/class_commands.h"
#include "cli/cli_common.h"
#include "common/environment.h"
#include "common/json_text.h"
#include "serve/classroom.h"
#include "serve/course_catalog.h"
#include "serve/rejudging.h"
#include "serve/server.h"
#include "serve/store_rejudging.h"

namespace cudojo::cli {

namespace {

using nlohmann::json;

std::string when(double seconds) { return iso_time(seconds); }

std::string ratio_text(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.3f}x", *ratio) : std::string("-");
}

void print_rejudging_line(const Rejudging& rejudging) {
  std::cout << fmt::format("{:>4}  {:<9}  {:>5}/{:<5} judged  {}  by {}  {}{}\n", rejudging.id,
                           to_string(rejudging.state), rejudging.judged, rejudging.jobs,
                           when(rejudging.created_at), rejudging.created_by.name, rejudging.filter,
                           rejudging.reason.empty() ? "" : "  (" + rejudging.reason + ")");
}

void print_detail(const Rejudging& rejudging, const std::vector<RejudgeItem>& items, bool all_items) {
  print_rejudging_line(rejudging);
  const RejudgeSummary summary = summarize(items);
  std::cout << fmt::format("\n{} of {} jobs judged again; {} verdicts would change{}\n", summary.judged,
                           summary.jobs, summary.flipped,
                           rejudging.state == RejudgingState::kApplied ? " (applied: they did)" : "");
  if (!summary.matrix.empty()) {
    std::cout << fmt::format("\n  {:<22} {:<22} {:>6}\n", "before", "after", "jobs");
    for (const auto& [verdicts, count] : summary.matrix)
      std::cout << fmt::format("  {:<22} {:<22} {:>6}\n", verdicts.first, verdicts.second, count);
  }
  auto print_item = [](const RejudgeItem& item) {
    std::cout << fmt::format("  job {:>6}  {:<20}  {:<12}  {:<14} {:>8} -> {:<14} {:>8}\n", item.job_id,
                             item.learner_name, item.stage, item.before_verdict.value_or("-"),
                             ratio_text(item.before_ratio),
                             item.rerun_state == JobState::kDone ? item.after_verdict.value_or("-")
                                                                 : std::string(to_string(item.rerun_state)),
                             ratio_text(item.after_ratio));
  };
  if (all_items) {
    std::cout << "\nEvery job:\n";
    for (const RejudgeItem& item : items) print_item(item);
  } else if (!summary.flips.empty()) {
    std::cout << "\nJobs whose verdict changes:\n";
    for (const RejudgeItem* item : summary.flips) print_item(*item);
  }
  if (rejudging.state == RejudgingState::kJudging) {
    std::cout << fmt::format("\n{}: cudojo rejudge apply {}   or   cudojo rejudge cancel {}\n",
                             summary.judged == summary.jobs ? "Judged" : "Still judging; then", rejudging.id,
                             rejudging.id);
  }
}

Rejudging require_rejudging(RejudgeStore& rejudgings, std::int64_t id) {
  auto found = rejudgings.find_rejudging(id);
  if (!found) throw UsageError(fmt::format("no rejudging has id {}; `cudojo rejudge list` lists them", id));
  return *found;
}

}  // namespace

std::unique_ptr<RejudgeCommands> add_rejudge_commands(CLI::App& app) {
  auto commands = std::make_unique<RejudgeCommands>();
  RejudgeCommands& c = *commands;
  c.data_dir = default_data_dir();
  if (const char* store = std::getenv(env::kStore); store && *store) c.store = store;
  c.command = app.add_subcommand(
      "rejudge",
      "Judge finished jobs again after a stage changed, and apply the new verdicts as a whole:\n"
      "  cudojo rejudge start --class 2 --stage reduction/3 --older-versions --reason 'gate 2.0 -> 1.6'\n"
      "  cudojo rejudge show 7                 verdicts before -> after, the jobs that flip\n"
      "  cudojo rejudge wait 7                 until every job is judged again\n"
      "  cudojo rejudge apply 7                the new verdicts replace the old (or: cancel 7)\n"
      "The servers judging this store run the jobs, after every learner's job; nothing a learner sees\n"
      "changes until apply. Reload a changed course into the servers first (SIGHUP).");
  c.command->require_subcommand(1);
  c.start = c.command->add_subcommand("start", "Choose finished jobs and queue them to be judged again");
  c.start->add_option("--class", c.class_name, "CLASS: an id or exact name (default: every class)");
  c.start->add_option("--stage", c.stage, "Only this stage (id or alias)");
  c.start->add_option("--learner", c.learner, "Only this learner (their id)");
  c.start->add_option("--verdict", c.verdict, "Only jobs with this verdict (accepted, too_slow, ...)");
  c.start->add_option("--since", c.since, "Only jobs submitted at or after: ISO 8601 with a zone");
  c.start->add_option("--until", c.until, "Only jobs submitted before: ISO 8601 with a zone");
  c.start->add_flag(
      "--older-versions", c.older_versions,
      "Only jobs judged under another version of the stage than the course's now (needs --stage)");
  c.start->add_option("--reason", c.reason, "Why, for the audit log and the instructors");
  c.list = c.command->add_subcommand("list", "List rejudgings, newest first");
  c.list->add_option("--class", c.class_name, "Only this class's");
  c.show = c.command->add_subcommand("show", "A rejudging: what it would change, and the jobs that flip");
  c.show->add_option("id", c.id, "The rejudging's id")->required();
  c.show->add_flag("--all", c.all_items, "List every job, not only those whose verdict changes");
  c.wait = c.command->add_subcommand("wait", "Wait until every job of a rejudging is judged, then show it");
  c.wait->add_option("id", c.id, "The rejudging's id")->required();
  c.wait->add_option("--timeout", c.timeout_seconds, "Give up after this many seconds (exit 1)")
      ->capture_default_str();
  c.apply = c.command->add_subcommand("apply", "Replace every job's verdict with its new one, as a whole");
  c.apply->add_option("id", c.id, "The rejudging's id")->required();
  c.cancel = c.command->add_subcommand("cancel", "Drop a rejudging's new verdicts; nothing changes");
  c.cancel->add_option("id", c.id, "The rejudging's id")->required();
  for (CLI::App* sub : {c.start, c.list, c.show, c.wait, c.apply, c.cancel}) {
    sub->add_option(
        "--data-dir", c.data_dir,
        "The server's data folder, holding cudojo.sqlite3 (default: $CUDOJO_DATA or ./cudojo-data)");
    sub->add_option(
        "--store", c.store,
        "The server's store instead: a SQLite file or a postgresql:// URL (default: $CUDOJO_STORE)");
    sub->add_flag("--json", c.json, "Print JSON (the API's shapes)");
  }
  return commands;
}

bool rejudge_asked(const RejudgeCommands& commands) { return commands.command->parsed(); }

int run_rejudge_command(RejudgeCommands& c, const std::vector<Stage>& course,
                        const std::filesystem::path& course_root,
                        const std::filesystem::path& calibration_dir) {
  const std::unique_ptr<Store> store = open_store_at(c.data_dir, c.store);
  RejudgeStore& rejudgings = store->rejudgings();
  std::optional<std::int64_t> class_id;
  if (!c.class_name.empty()) class_id = find_the_class(store->classes(), c.class_name).id;
  if (*c.start) {
    json body = json::object();
    if (!c.stage.empty()) body["stage"] = c.stage;
    if (c.start->count("--learner") > 0) body["learner"] = c.learner;  // the parser refuses 0 or less
    if (!c.verdict.empty()) body["verdict"] = c.verdict;
    if (!c.since.empty()) body["since"] = c.since;
    if (!c.until.empty()) body["until"] = c.until;
    if (c.older_versions) body["older_versions"] = true;
    if (!c.reason.empty()) body["reason"] = c.reason;
    const CourseCatalog catalog(course_root, calibration_dir, course);
    auto parsed = parse_rejudge_request(body, *catalog.current());
    if (auto* problem = std::get_if<std::string>(&parsed)) throw UsageError(*problem);
    RejudgeRequest& wanted = std::get<RejudgeRequest>(parsed);
    wanted.filter.class_id = class_id;
    try {
      const Rejudging made = rejudgings.create_rejudging(
          wanted.filter, filter_text(wanted.filter), wanted.reason, ServeLimits{}.max_jobs_per_rejudging,
          {console_actor(), class_id, "rejudging.create",
           "started a rejudging from the console" + (wanted.reason.empty() ? "" : ": " + wanted.reason)});
      if (c.json) {
        std::cout << json_text(rejudging_json(made), 2) << "\n";
      } else {
        std::cout << fmt::format(
            "rejudging {} made: {} jobs queued behind every learner's job.\n"
            "Follow it with `cudojo rejudge show {}` (or `wait {}`); then apply or cancel it.\n",
            made.id, made.jobs, made.id, made.id);
      }
      return 0;
    } catch (const StoreError& error) {
      if (error.code() == StoreErrorCode::kConflict) throw UsageError(error.what());
      throw;
    }
  }
  if (*c.list) {
    const auto list = rejudgings.list_rejudgings(class_id);
    if (c.json) {
      json shown = json::array();
      for (const Rejudging& rejudging : list) shown.push_back(rejudging_json(rejudging));
      std::cout << json_text(shown, 2) << "\n";
    } else if (list.empty()) {
      std::cout << "no rejudgings yet\n";
    } else {
      for (const Rejudging& rejudging : list) print_rejudging_line(rejudging);
    }
    return 0;
  }
  Rejudging rejudging = require_rejudging(rejudgings, c.id);
  if (*c.wait) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(c.timeout_seconds);
    while (rejudging.state == RejudgingState::kJudging && rejudging.judged < rejudging.jobs) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::cerr << fmt::format(
            "rejudging {}: {} of {} judged after {:g} s; is a server judging this store?\n", rejudging.id,
            rejudging.judged, rejudging.jobs, c.timeout_seconds);
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      rejudging = require_rejudging(rejudgings, c.id);
    }
  }
  if (*c.show || *c.wait) {
    const auto items = rejudgings.rejudging_items(rejudging.id);
    if (c.json) {
      std::cout << json_text(rejudging_detail_json(rejudging, items, c.all_items), 2) << "\n";
    } else {
      print_detail(rejudging, items, c.all_items);
    }
    return 0;
  }
  const bool apply = c.apply->parsed();
  try {
    const AuditNote note{console_actor(), rejudging.class_id, apply ? "rejudging.apply" : "rejudging.cancel",
                         fmt::format("{} rejudging {} ({} jobs) from the console",
                                     apply ? "applied" : "cancelled", rejudging.id, rejudging.jobs)};
    const auto ended = apply ? rejudgings.apply_rejudging(rejudging.id, note)
                             : rejudgings.cancel_rejudging(rejudging.id, note);
    if (c.json) {
      std::cout << json_text(rejudging_json(*ended), 2) << "\n";
    } else {
      std::cout << fmt::format("rejudging {} {}: {}\n", ended->id, to_string(ended->state),
                               apply ? "its verdicts now count in progress, grades and leaderboards"
                                     : "every verdict stays as it was");
    }
    return 0;
  } catch (const StoreError& error) {
    if (error.code() == StoreErrorCode::kConflict) throw UsageError(error.what());
    throw;
  }
}

}  // namespace cudojo::cli

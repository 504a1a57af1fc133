// `cudojo rejudge ...`: judge finished jobs again after a course changed, from the server machine,
// against the store itself (as `cudojo class` does). The reruns are judged by the servers that judge
// that store, behind every learner's job; `show` tells what would change, `apply` or `cancel` ends
// it as a whole. Every change is in the audit log as the server's console.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "stage/stage.h"

namespace cudojo::cli {

struct RejudgeCommands {
  CLI::App* command = nullptr;
  CLI::App* start = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* wait = nullptr;
  CLI::App* apply = nullptr;
  CLI::App* cancel = nullptr;

  std::filesystem::path data_dir;
  std::string store;
  bool json = false;
  std::string class_name;  // CLASS: an id or a class's exact name; empty: every class
  std::string stage;
  std::int64_t learner = 0;
  std::string verdict;
  std::string since;
  std::string until;
  bool older_versions = false;
  std::string reason;
  std::int64_t id = 0;
  bool all_items = false;
  double timeout_seconds = 3600;
};

std::unique_ptr<RejudgeCommands> add_rejudge_commands(CLI::App& app);
// Runs the one asked for (false from `asked`: none was): its exit code. Throws UsageError.
bool rejudge_asked(const RejudgeCommands& commands);
int run_rejudge_command(RejudgeCommands& commands, const std::vector<Stage>& course,
                        const std::filesystem::path& course_root,
                        const std::filesystem::path& calibration_dir);

}  // namespace cudojo::cli

// `cudojo serve`: its options, the limits a deployment may set (--limit NAME=VALUE, listed by
// --list-limits), and its start.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "serve/server.h"
#include "stage/stage.h"

namespace cudojo::cli {

struct ServeCommand {
  CLI::App* command = nullptr;
  ServeSettings settings;
  bool no_http = false;
  bool no_workers = false;
  bool list_limits = false;
  bool no_open_sign_up = false;
  bool no_profiling = false;
  std::vector<std::string> limits;  // NAME=VALUE, in the order given
};

// Adds `serve` to `app`; the options fill the returned command when the line is parsed.
std::unique_ptr<ServeCommand> add_serve_command(CLI::App& app);
// Runs it: the exit code (0 after a stop signal, 2 when it cannot start). Throws UsageError for a
// contradictory or malformed option.
int run_serve_command(ServeCommand& serve, const std::vector<Stage>& course,
                      const std::filesystem::path& course_root, const std::filesystem::path& calibration_dir);

}  // namespace cudojo::cli

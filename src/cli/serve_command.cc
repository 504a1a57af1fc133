#include "cli/serve_command.h"

#include <fmt/format.h>

#include <iostream>

#include "cli/cli_common.h"
#include "common/environment.h"
#include "common/limits.h"

namespace cudojo::cli {

std::unique_ptr<ServeCommand> add_serve_command(CLI::App& app) {
  auto serve = std::make_unique<ServeCommand>();
  ServeSettings& settings = serve->settings;
  settings.data_dir = default_data_dir();
  settings.web_dir = default_web_dir();
  if (const char* store = std::getenv(env::kStore); store && *store) settings.store = store;
  CLI::App* command = app.add_subcommand(
      "serve",
      "Serve the course: a web page (lesson, editor, Run, results, history) and a JSON API "
      "(docs/openapi.yaml) over the same judge as `check`. Jobs are queued in a store and survive restarts:\n"
      "  cudojo serve                                            one machine, SQLite in --data-dir\n"
      "  cudojo serve --store postgresql://cudojo@db/cudojo      many nodes sharing one PostgreSQL database\n"
      "  cudojo serve --store postgresql://... --no-http         a GPU host that only judges\n"
      "  cudojo serve --store postgresql://... --no-workers      a web node without a GPU\n"
      "  cudojo serve --trusted-proxy 127.0.0.1                  behind nginx on the same machine "
      "(docs/DEPLOY.md)\n"
      "  cudojo serve --limit max_queue_length=2000              any limit (--list-limits names them all)\n"
      "docs/SCALING.md explains leases, fairness and what happens when a node or the database goes away.");
  serve->command = command;
  command->add_option("--host", settings.host, "Address to listen on")->capture_default_str();
  command->add_option("--port", settings.port, "Port (0 picks a free one and prints it)")
      ->capture_default_str();
  command->add_option("--data-dir", settings.data_dir,
                      "Folder for the SQLite database (default: $CUDOJO_DATA or ./cudojo-data)");
  command->add_option(
      "--workers", settings.workers,
      "Jobs judged at once, spread over the visible GPUs (default: judge_slots_per_gpu, 4, per GPU; "
      "0 queues without judging)");
  command->add_option("--max-queue", settings.limits.max_queue_length, "Queued + running jobs before 429")
      ->capture_default_str();
  command->add_option(
      "--store", settings.store,
      "Where jobs and learners live: a postgresql:// URL (shared by every node using it) or a "
      "SQLite file (default: $CUDOJO_STORE, else <data-dir>/cudojo.sqlite3)");
  command->add_flag("--no-http", serve->no_http, "Judge only: no listener (a GPU host behind web nodes)");
  command
      ->add_flag("--no-workers", serve->no_workers,
                 "Serve only: judge nothing (a web node); same as --workers 0")
      ->excludes("--workers");
  command->add_option("--node-name", settings.node_name,
                      "This node's name in /api/nodes and in reports (default: <host>-<pid>)");
  command
      ->add_option("--lease-seconds", settings.limits.job_lease_seconds,
                   "How long a running job stays this node's without a renewal; after it, any node gives "
                   "the job to another judge. 2 to 3600 seconds (default: 30)")
      ->check(CLI::Range(2.0, 3600.0).description(""))
      ->option_text("SECONDS");
  command->add_option("--web-dir", settings.web_dir, "Folder holding the page (default: the installed web/)");
  command->add_option(
      "--trusted-proxy", settings.trusted_proxies,
      "A proxy in front of this server (an address or network, such as 127.0.0.1 or 10.0.0.0/8; repeat for "
      "more): its X-Forwarded-For names the client, for the per-address limits, and its own connections "
      "are not counted per address. Without one, every client is the address it connects from.");
  command->add_flag(
      "--no-open-sign-up", serve->no_open_sign_up,
      "Take new learners only by a class's invite code (POST /api/join) or a roster's tokens: without it, "
      "anyone may sign up with a name into the default class");
  command->add_flag(
      "--no-profiling", serve->no_profiling,
      "Refuse profiled jobs (\"profile\": hot spots and an Nsight Compute report, each holding the "
      "GPU alone for seconds): for a class whose deadline needs every second of the GPU");
  command->add_option(
      "--limit", serve->limits,
      "Set one of the server's limits, NAME=VALUE (repeat for more); --list-limits names them");
  command->add_flag(
      "--all-metrics", settings.all_metrics,
      "Measure SM throughput for every correct job, not only on the stages whose gate reads it: the "
      "Metrics tab then always has it, at the cost of most of the profiler's passes, each with the GPU "
      "alone");
  command->add_flag("--list-limits", serve->list_limits,
                    "Print every limit with its default and meaning, and exit");
  return serve;
}

int run_serve_command(ServeCommand& serve, const std::vector<Stage>& course,
                      const std::filesystem::path& course_root,
                      const std::filesystem::path& calibration_dir) {
  ServeSettings& settings = serve.settings;
  for (const std::string& assignment : serve.limits) {
    if (auto problem = apply_serve_limit(settings.limits, assignment)) throw UsageError(*problem);
  }
  if (serve.list_limits) {
    const ServeLimits defaults;
    std::cout << "Limits of cudojo serve (set with --limit NAME=VALUE; defaults in src/common/limits.h):\n";
    for (const ServeLimitField& field : serve_limit_fields()) {
      const std::string now = field.read(settings.limits);
      const std::string value = fmt::format("{} {}", now, field.unit);
      std::cout << fmt::format("  {:<40} {:<20} {}{}\n", field.name, value, field.meaning,
                               now == field.read(defaults) ? "" : " (set)");
    }
    return 0;
  }
  settings.calibration_dir = calibration_dir;
  settings.course_root = course_root;
  settings.http = !serve.no_http;
  settings.open_sign_up = !serve.no_open_sign_up;
  settings.profiling = !serve.no_profiling;
  if (serve.no_workers) settings.workers = 0;
  if (serve.no_http && settings.workers == 0)
    throw UsageError("--no-http with no workers would do nothing; give one of them up");
  // A short lease needs a heartbeat well inside it.
  settings.limits.heartbeat_ms =
      std::min(settings.limits.heartbeat_ms, static_cast<int>(settings.limits.job_lease_seconds * 1000 / 4));
  return run_server(course, settings);
}

}  // namespace cudojo::cli

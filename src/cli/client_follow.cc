// Following a job from the terminal until its verdict (cli/client_internal.h): one line on stderr
// per change of state, the report on stdout, and Ctrl-C to withdraw a job that has not started.
#include <fmt/format.h>

#include <optional>
#include <utility>

#include "cli/client_internal.h"
#include "common/json_text.h"
#include "report/report.h"
#include "report/verdict.h"

namespace cudojo::cli::client_internal {

using client::ApiClient;
using client::ApiError;
using client::ConnectionError;
using nlohmann::json;

namespace {

// The finished job on `out`: the API's JSON, or check's text report; check's exit code.
int show_done(const json& job, const FollowOptions& options, std::ostream& out) {
  std::optional<Verdict> verdict;
  if (job.contains("verdict") && job["verdict"].is_string())
    verdict = parse_verdict(job["verdict"].get<std::string>());
  if (options.json) {
    out << json_text(job, 2) << "\n";
  } else if (job.contains("report") && job["report"].is_object()) {
    try {
      const Report report = job["report"].get<Report>();
      out << render_text(report, options.colour);
      verdict = report.verdict;
    } catch (const std::exception&) {
      out << fmt::format("job {}: {}\n", job.value("id", std::int64_t{0}), job.value("verdict", "done"));
    }
  } else {
    out << fmt::format("job {}: {}\n", job.value("id", std::int64_t{0}), job.value("verdict", "done"));
  }
  return verdict ? exit_code(*verdict) : kExitServer;
}

}  // namespace

std::string progress_text(const json& job) {
  const std::string state = job.value("state", "");
  if (state == "queued") {
    if (job.contains("position") && job["position"].is_number_integer())
      return fmt::format("queued, {} ahead", job["position"].get<std::int64_t>());
    return "queued";
  }
  if (state == "running") {
    const std::string phase = job.value("phase", "");
    if (phase == "starting" || phase == "queued" || phase.empty()) return "compiling";
    return phase;
  }
  return state;
}

int follow_job(ApiClient& api, std::int64_t id, const FollowOptions& options, std::ostream& out,
               std::ostream& err, bool withdraw, std::string already_said) {
  std::string last_text = std::move(already_said), last_state = "queued";
  bool judges_checked = false;
  int failures = 0;
  while (true) {
    if (interrupted()) {
      std::string said =
          fmt::format("stopped following job {}; {}the job goes on: `cudojo status {}` follows it", id,
                      last_state == "queued" ? "" : "it had started, so ", id);
      try {
        if (withdraw && last_state == "queued" && api.withdraw(id))
          said = fmt::format("withdrew job {}: it had not started, and it is gone from your history", id);
      } catch (const std::exception& e) {
        said = fmt::format("could not withdraw job {}: {}; `cudojo status {}` follows it", id, e.what(), id);
      }
      return report({kExitInterrupted, "interrupted", said}, out, err, options.json);
    }
    json job;
    std::string lost;  // why the server did not answer this poll
    try {
      job = api.job(id);
      failures = 0;
    } catch (const ConnectionError& error) {
      lost = error.what();
    } catch (const ApiError& error) {
      // A proxy in front of a stopped server answers 502 or 504; a server shutting down, 503.
      if (error.status != 502 && error.status != 503 && error.status != 504) throw;
      lost = fmt::format("HTTP {}: {}", error.status, error.what());
    }
    if (!lost.empty()) {
      if (++failures >= options.reconnect_tries)
        return report({kExitServer, "server_unreachable",
                       fmt::format("the server stopped answering while following job {} ({}); the job is "
                                   "kept there: `cudojo status {}` follows it when the server is back",
                                   id, lost, id)},
                      out, err, options.json);
      err << fmt::format("cannot reach the server; trying again ({} of {})\n", failures,
                         options.reconnect_tries - 1);
      nap(1.0);
      continue;
    }
    const std::string state = job.value("state", "");
    if (state == "done") return show_done(job, options, out);
    last_state = state;
    const std::string text = progress_text(job);
    if (text != last_text) {
      err << fmt::format("job {}: {}\n", id, text);
      last_text = text;
    }
    if (state == "queued" && !judges_checked) {
      judges_checked = true;
      if (api.judge_online() == false)
        err << "no judge is online; your job waits" << (withdraw ? " (Ctrl-C withdraws it)\n" : "\n");
    }
    nap(options.poll_seconds);
  }
}

}  // namespace cudojo::cli::client_internal

#include "cli/client_commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <thread>

#include "cli/cli_common.h"
#include "client/api_client.h"
#include "client/http_client.h"
#include "client/server_book.h"
#include "common/json_text.h"
#include "common/limits.h"
#include "compile/utf8.h"
#include "report/report.h"
#include "report/verdict.h"
#include "stage/language.h"

namespace cudojo::cli {

namespace {

namespace fs = std::filesystem;
using client::ApiClient;
using client::ApiError;
using client::ConnectionError;
using nlohmann::json;

std::atomic<bool> g_interrupted{false};

fs::path servers_file(const ServerChoice& where) {
  return where.servers_file.empty() ? client::default_server_book_path() : where.servers_file;
}

client::ClientSettings settings_for(const ServerChoice& where) {
  const client::ServerBook book = client::ServerBook::load(servers_file(where));
  const auto entry = book.find(where.server);
  if (!entry) {
    if (where.server == "default")
      throw UsageError(
          "not logged in to a server: run `cudojo login URL --token TOKEN` (or --invite CODE --name "
          "NAME) first");
    throw UsageError(fmt::format("no server named '{}' in {}: run `cudojo login URL --as {}` first",
                                 where.server, book.file().string(), where.server));
  }
  client::ClientSettings settings;
  settings.url = entry->url;
  settings.token = entry->token;
  settings.cacert = entry->cacert;
  return settings;
}

std::string retry_text(const ApiError& error) {
  return error.retry_after ? fmt::format("; try again in {} s", *error.retry_after) : "; try again later";
}

// What went wrong, in a sentence that says what to do next, and the exit code that says whose
// problem it is (kExitUsage: the command line or the config; kExitServer: the server).
struct Failure {
  int code;
  std::string kind;
  std::string message;
};

Failure describe(const ApiError& error) {
  const std::string what = error.what();
  switch (error.status) {
    case 401:
      return {kExitServer, "token_refused", "the server refused the token; cudojo login again"};
    case 429:
      return {kExitServer, "server_busy",
              fmt::format("the server is busy: {} (HTTP 429{})", what, retry_text(error))};
    case 503:
      return {kExitServer, "server_unavailable",
              fmt::format("the server cannot take it now: {} (HTTP 503{})", what, retry_text(error))};
    default:
      if (error.not_cudojo) return {kExitServer, "not_cudojo", what};
      return {kExitServer, "server_refused",
              fmt::format("the server said: {} (HTTP {}{})", what, error.status,
                          error.status == 404 ? "; is the URL the page's address, with no path?" : "")};
  }
}

// Says `failure` on `err` (and as one JSON object on `out` under --json); its exit code.
int report(const Failure& failure, std::ostream& out, std::ostream& err, bool json_output) {
  err << "cudojo: " << failure.message << "\n";
  if (json_output)
    out << json_text({{"error", failure.message}, {"kind", failure.kind}, {"exit_code", failure.code}}, 2)
        << "\n";
  return failure.code;
}

// Runs a command's body and turns its errors into a Failure on `err` (and, under --json, one JSON
// object on `out` as well, as `fail` does for the local commands, so stdout is always JSON).
template <typename Body>
int guarded(std::ostream& out, std::ostream& err, bool json_output, Body&& body) {
  Failure failure;
  try {
    return body();
  } catch (const UsageError& error) {
    failure = {kExitUsage, "usage_error", error.what()};
  } catch (const client::ClientSetupError& error) {
    failure = {kExitUsage, "usage_error", error.what()};
  } catch (const client::ServerBookError& error) {
    failure = {kExitUsage, "config_error", error.what()};
  } catch (const ConnectionError& error) {
    failure = {kExitServer, "server_unreachable", error.what()};
  } catch (const ApiError& error) {
    failure = describe(error);
  } catch (const std::exception& error) {  // a bug of ours: still one line, and JSON under --json
    failure = {kExitUsage, "internal_error", fmt::format("internal error: {}", error.what())};
  }
  return report(failure, out, err, json_output);
}

std::string local_time(double seconds) {
  const std::time_t when = static_cast<std::time_t>(seconds);
  std::tm parts{};
  localtime_r(&when, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &parts);
  return text;
}

// Sleeps up to `seconds`, waking early on Ctrl-C.
void nap(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_interrupted && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Where `text` first stops being UTF-8, as "line 3 (byte 0xE9)"; empty when it is all UTF-8.
std::string not_utf8(const std::string& text) {
  for (std::size_t at = 0, line = 1, n = 0; at < text.size(); line += text[at] == '\n', at += n)
    if ((n = utf8_sequence_length(text, at)) == 0)
      return fmt::format("line {} (byte 0x{:02X})", line, static_cast<unsigned char>(text[at]));
  return "";
}

// One line of progress: "queued, 3 ahead", "compiling", "tests", ...
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

// Polls the job until it is done, saying each change on `err`. Ctrl-C withdraws a queued job when
// `withdraw` (submit's own job; `status` only looks) and leaves a running one.
int follow_job(ApiClient& api, std::int64_t id, const FollowOptions& options, std::ostream& out,
               std::ostream& err, bool withdraw) {
  std::string last_text, last_state = "queued";
  bool judges_checked = false;
  int failures = 0;
  while (true) {
    if (g_interrupted) {
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

}  // namespace

void request_interrupt() { g_interrupted = true; }
void reset_interrupt() { g_interrupted = false; }
bool mark_interrupt() { return g_interrupted.exchange(true); }

int run_login(const LoginOptions& options, std::ostream& out, std::ostream& err) {
  return guarded(out, err, false, [&] {
    std::string url = options.url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    client::parse_url(url);  // a malformed URL is a usage error before anything is sent
    if (options.where.server.empty()) throw UsageError("--as needs a name");
    // Read (and for a join, written) before asking: a joined learner's token must not be lost.
    client::ServerBook book = client::ServerBook::load(servers_file(options.where));
    client::ClientSettings settings;
    settings.url = url;
    settings.cacert = options.cacert;
    client::ServerEntry entry;
    entry.url = url;
    entry.cacert = options.cacert;
    if (!options.invite.empty()) {
      if (options.name.empty()) throw UsageError("--invite needs --name: the name your class will see");
      if (!options.token.empty()) throw UsageError("give either --token or --invite, not both");
      book.save();
      ApiClient api(settings);
      const json joined = api.join(options.invite, options.name);
      entry.token = joined.value("token", "");
      entry.learner = joined.value("name", options.name);
      const std::string class_name =
          joined.contains("class") && joined["class"].is_object() ? joined["class"].value("name", "") : "";
      out << fmt::format("joined {} as {} on {}\n", class_name.empty() ? "the class" : class_name,
                         entry.learner, url);
    } else {
      std::string token = options.token;
      if (token.empty())
        if (const char* from_env = std::getenv("CUDOJO_TOKEN")) token = from_env;
      if (token.empty())
        throw UsageError(
            "give --token TOKEN (or set CUDOJO_TOKEN, which keeps it off the command line), or join a "
            "class with --invite CODE --name NAME");
      settings.token = token;
      ApiClient api(settings);
      json me;
      try {
        me = api.me();
      } catch (const ApiError& error) {
        if (error.status != 401) throw;
        err << "cudojo: the server refused this token: check it, or ask your instructor for a new one\n";
        return kExitServer;
      }
      entry.token = token;
      entry.learner = me.value("name", "");
      out << fmt::format("logged in to {} as {}", url, entry.learner.empty() ? "(unnamed)" : entry.learner);
      if (me.value("kind", "learner") != "learner") out << " (staff: staff do not submit kernels)";
      out << "\n";
    }
    book.put(options.where.server, entry);
    book.save();
    out << fmt::format("saved as '{}' in {}\n", options.where.server, book.file().string());
    return 0;
  });
}

int run_logout(const ServerChoice& where, std::ostream& out, std::ostream& err) {
  return guarded(out, err, false, [&] {
    client::ServerBook book = client::ServerBook::load(servers_file(where));
    const auto entry = book.find(where.server);
    if (!entry || !book.remove(where.server))
      throw UsageError(fmt::format("no server named '{}' in {}", where.server, book.file().string()));
    book.save();
    out << fmt::format("logged out of '{}' ({}); its token was removed from {}\n", where.server, entry->url,
                       book.file().string());
    return 0;
  });
}

int run_submit(const SubmitOptions& options, std::ostream& out, std::ostream& err) {
  return guarded(out, err, options.follow.json, [&] {
    // Read as `check` reads it (cli_common: --lang against the extension, "-" for standard input),
    // and an oversize kernel refused here rather than sent.
    const Language language = language_of(options.file, options.lang);
    const JudgeLimits limits;
    const SubmissionFile kernel = read_submission(options.file, language, limits.max_source_bytes);
    if (kernel.bytes > limits.max_source_bytes)
      throw UsageError(fmt::format("{} is {} bytes; the server takes at most {} bytes of source",
                                   kernel.file_name, kernel.bytes, limits.max_source_bytes));
    const std::string& source = kernel.source;
    if (const std::string where = not_utf8(source); !where.empty())
      throw UsageError(fmt::format("{}: {} is not UTF-8; the server takes UTF-8 text: save the file as UTF-8",
                                   options.file, where));
    ApiClient api(settings_for(options.where));
    const json queued =
        api.submit(options.stage, source, std::string(to_string(language)), client::new_idempotency_key());
    const std::int64_t id = queued.value("id", std::int64_t{0});
    if (options.no_wait) {
      if (options.follow.json) {
        out << json_text(queued, 2) << "\n";
      } else {
        out << fmt::format("job {} queued", id);
        if (queued.contains("position"))
          out << fmt::format(", {} ahead", queued["position"].get<std::int64_t>());
        out << fmt::format("; `cudojo status {}` follows it\n", id);
      }
      return 0;
    }
    err << fmt::format("sent {} as job {} to {}\n", options.file, id, api.url());
    return follow_job(api, id, options.follow, out, err, true);
  });
}

int run_status(const StatusOptions& options, std::ostream& out, std::ostream& err) {
  return guarded(out, err, options.follow.json, [&] {
    if (options.job <= 0) throw UsageError("give a job's number, as `cudojo history` lists them");
    ApiClient api(settings_for(options.where));
    try {
      return follow_job(api, options.job, options.follow, out, err, false);
    } catch (const ApiError& error) {
      if (error.status != 404) throw;
      throw UsageError(fmt::format(
          "no job {} among yours (a withdrawn job is gone); `cudojo history` lists them", options.job));
    }
  });
}

int run_history(const HistoryOptions& options, std::ostream& out, std::ostream& err) {
  return guarded(out, err, options.json, [&] {
    if (options.limit < 1 || options.limit > 100) throw UsageError("--limit: give a number from 1 to 100");
    ApiClient api(settings_for(options.where));
    const json page = api.history(options.stage, options.limit);
    if (options.json) {
      out << json_text(page, 2) << "\n";
      return 0;
    }
    const json jobs = page.value("jobs", json::array());
    if (jobs.empty()) {
      out << (options.stage.empty() ? "no jobs yet\n" : fmt::format("no jobs on {} yet\n", options.stage));
      return 0;
    }
    for (const auto& job : jobs) {
      const std::string verdict =
          job["verdict"].is_string() ? job["verdict"].get<std::string>() : job.value("state", "");
      std::string ratio = "-";
      for (const char* key : {"baseline_ratio", "time_ratio"}) {
        if (job.contains(key) && job[key].is_number()) {
          ratio = fmt::format("{:.2f}x", job[key].get<double>());
          break;
        }
      }
      out << fmt::format("{:>6}  {:<14} {:<7} {:<20} {:>7}  {}{}\n", job.value("id", std::int64_t{0}),
                         job.value("stage", ""), job.value("language", ""), verdict, ratio,
                         local_time(job.value("created_at", 0.0)), job.value("late", false) ? "  late" : "");
    }
    if (page.contains("next_before") && !page["next_before"].is_null())
      out << fmt::format("(the newest {}; --limit up to 100 shows more, --json the whole page)\n",
                         jobs.size());
    return 0;
  });
}

int run_pull(const PullOptions& options, std::ostream& out, std::ostream& err) {
  return guarded(out, err, false, [&] {
    const bool to_file = !options.output.empty() && options.output != "-";  // `-o -`: standard output
    if (to_file && fs::exists(fs::symlink_status(options.output)) && !options.force)
      throw UsageError(fmt::format("'{}' exists; --force replaces it", options.output));
    ApiClient api(settings_for(options.where));
    std::optional<json> job;
    const json page = api.history(options.stage, 1);
    if (!page.value("jobs", json::array()).empty())
      job = api.job(page["jobs"][0].value("id", std::int64_t{0}));
    std::optional<json> draft;
    const json drafts = api.drafts(options.stage).value("drafts", json::array());
    for (const auto& candidate : drafts)
      if (!draft || candidate.value("updated_at", 0.0) > draft->value("updated_at", 0.0)) draft = candidate;
    std::string source, said;
    if (draft && (!job || draft->value("updated_at", 0.0) > job->value("created_at", 0.0))) {
      source = draft->value("source", "");
      said = fmt::format("your {} draft, saved {}", draft->value("language", ""),
                         local_time(draft->value("updated_at", 0.0)));
    } else if (job) {
      source = job->value("source", "");
      said = fmt::format("job {} ({}, sent {})", job->value("id", std::int64_t{0}),
                         job->value("language", ""), local_time(job->value("created_at", 0.0)));
    } else {
      err << fmt::format("cudojo: nothing of yours on {} yet: no job and no draft\n", options.stage);
      return 1;
    }
    if (!to_file) {
      out << source;
    } else {
      // Without --force, O_EXCL: a file (or a link) that appeared meanwhile is not replaced either.
      const int fd = open(options.output.c_str(),
                          O_WRONLY | O_CREAT | O_CLOEXEC | (options.force ? O_TRUNC : O_EXCL), 0644);
      const bool ok =
          fd >= 0 && write(fd, source.data(), source.size()) == static_cast<ssize_t>(source.size());
      const std::string why = std::strerror(errno);
      if (fd >= 0) close(fd);
      if (!ok) throw UsageError(fmt::format("cannot write '{}': {}", options.output, why));
      out << fmt::format("wrote {} from {}\n", options.output, said);
    }
    return 0;
  });
}

}  // namespace cudojo::cli

#include "cli/client_commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "cli/cli_common.h"
#include "cli/client_internal.h"
#include "client/api_client.h"
#include "client/http_client.h"
#include "client/server_book.h"
#include "common/json_text.h"
#include "common/limits.h"
#include "compile/utf8.h"
#include "stage/language.h"

namespace cudojo::cli {

namespace {

namespace fs = std::filesystem;
using client::ApiClient;
using client::ApiError;
using nlohmann::json;
using namespace client_internal;

// Where `text` first stops being UTF-8, as "line 3 (byte 0xE9)"; empty when it is all UTF-8.
std::string not_utf8(const std::string& text) {
  for (std::size_t at = 0, line = 1, n = 0; at < text.size(); line += text[at] == '\n', at += n)
    if ((n = utf8_sequence_length(text, at)) == 0)
      return fmt::format("line {} (byte 0x{:02X})", line, static_cast<unsigned char>(text[at]));
  return "";
}

}  // namespace

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
    // The queue as the submission's answer found it: a judge may start the job before the first poll.
    json as_queued = queued;
    as_queued["state"] = "queued";
    const std::string queued_text = progress_text(as_queued);
    err << fmt::format("sent {} as job {} to {}: {}\n", options.file, id, api.url(), queued_text);
    return follow_job(api, id, options.follow, out, err, true, queued_text);
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
    const json page = api.history(options.stage, options.limit, options.before);
    if (options.json) {
      out << json_text(page, 2) << "\n";
      return 0;
    }
    const json jobs = page.value("jobs", json::array());
    const std::string on_stage = options.stage.empty() ? "" : " " + options.stage;
    if (jobs.empty()) {
      if (options.before)
        out << fmt::format("no jobs{} before job {}\n", on_stage, *options.before);
      else
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
    if (page.contains("next_before") && page["next_before"].is_number_integer())
      out << fmt::format("(older jobs: cudojo history{} --before {})\n", on_stage,
                         page["next_before"].get<std::int64_t>());
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

#include "serve/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/json_text.h"
#include "serve/dispatcher.h"
#include "serve/markdown.h"
#include "stage/stage_json.h"

namespace cudojo {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSignInFirst = "sign in first: POST /api/learners gives a token";

void send_json(httplib::Response& response, int status, const json& body) {
  response.status = status;
  response.set_content(json_text(body), "application/json");
}

// The sentence for an error httplib answered by itself (no route, a body over the limit, ...).
std::string error_sentence(int status) {
  switch (status) {
    case 400:
      return "the request could not be read";
    case 404:
      return "no such route";
    case 405:
      return "this path does not answer that method";
    case 413:
      return "the request is larger than the server accepts";
    default:
      return "HTTP error " + std::to_string(status);
  }
}

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_json(response, status, {{"error", message}});
}

// The one place a Store error becomes an HTTP status: the learner's mistakes are 4xx, the
// server's own failures 500 (never blamed on the request).
int http_status(StoreErrorCode code) {
  switch (code) {
    case StoreErrorCode::kInvalidName:
      return 400;
    case StoreErrorCode::kNameTaken:
      return 409;
    case StoreErrorCode::kKeyReused:
      return 422;
    case StoreErrorCode::kInternal:
      return 503;
    case StoreErrorCode::kUnavailable:
      return 503;
    case StoreErrorCode::kQueueFull:
    case StoreErrorCode::kLearnerBusy:
      return 429;
  }
  return 500;  // not reached: the switch names every code, and -Wall warns when one is added
}

json job_json(Store& store, const JobRecord& job, bool with_source) {
  json j = {{"id", job.id},
            {"stage", job.stage},
            {"language", job.language},
            {"state", to_string(job.state)},
            {"phase", job.phase},
            {"attempts", job.attempts},
            {"verdict", job.verdict ? json(*job.verdict) : json(nullptr)},
            {"created_at", job.created_at},
            {"started_at", job.started_at ? json(*job.started_at) : json(nullptr)},
            {"finished_at", job.finished_at ? json(*job.finished_at) : json(nullptr)}};
  if (job.state == JobState::kQueued) j["position"] = store.queue_position(job.id);
  if (job.finished_at) j["queued_to_verdict_ms"] = (*job.finished_at - job.created_at) * 1000.0;
  if (job.report_json) {
    json report = json::parse(*job.report_json, nullptr, false);
    j["report"] = report.is_discarded() ? json(nullptr) : report;
  } else {
    j["report"] = nullptr;
  }
  if (with_source) j["source"] = job.source;
  return j;
}

json optional_json(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

// One line of /api/history: never the source or the report.
json job_summary_json(const JobSummary& job) {
  return {{"id", job.id},
          {"stage", job.stage},
          {"language", job.language},
          {"state", to_string(job.state)},
          {"verdict", job.verdict ? json(*job.verdict) : json(nullptr)},
          {"time_ratio", optional_json(job.time_ratio)},
          {"baseline_ratio", optional_json(job.baseline_ratio)},
          {"created_at", job.created_at},
          {"finished_at", optional_json(job.finished_at)}};
}

json learner_json(const Learner& learner) {
  return {{"id", learner.id}, {"name", learner.name}, {"leaderboard", learner.leaderboard}};
}

// The learner behind a request: "Authorization: Bearer <token>", or ?token= for EventSource,
// which cannot set headers.
std::optional<Learner> authenticate(Store& store, const httplib::Request& request) {
  std::string token;
  const std::string header = request.get_header_value("Authorization");
  if (header.rfind("Bearer ", 0) == 0) token = header.substr(7);
  if (token.empty() && request.has_param("token")) token = request.get_param_value("token");
  return store.find_learner_by_token(token);
}

std::optional<std::int64_t> parse_id(const std::string& text) {
  try {
    std::size_t used = 0;
    const long long id = std::stoll(text, &used);
    if (used != text.size() || id <= 0) return std::nullopt;
    return id;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

Api::Api(Store& store, Dispatcher& dispatcher, const std::vector<Stage>& course,
         const ServeSettings& settings, NodeInfo node, int gpus)
    : store_(store),
      dispatcher_(dispatcher),
      course_(course),
      limits_(settings.limits),
      judge_limits_(settings.judge_limits),
      web_dir_(settings.web_dir),
      node_(std::move(node)),
      gpus_(gpus) {}

void Api::register_routes(httplib::Server& server) {
  // Before any route, and before a body is read: a body must say its length (the request limit is
  // enforced on Content-Length; a chunked body would not be bounded), and JSON routes take JSON
  // (a form or text/plain POST is what another site's page can send without asking).
  server.set_pre_routing_handler([this](const Request& request, Response& response) {
    // A known path asked with a method it does not answer: 405 naming the ones it does (httplib
    // alone would answer 404, as for a path that does not exist). HEAD is answered wherever GET is.
    for (const auto& [pattern, allow] : allowed_methods_) {
      if (!std::regex_match(request.path, pattern)) continue;
      const std::string method = request.method == "HEAD" ? "GET" : request.method;
      bool allowed = false;
      for (std::size_t at = 0; at < allow.size();) {
        const std::size_t end = std::min(allow.find(", ", at), allow.size());
        allowed = allowed || allow.compare(at, end - at, method) == 0;
        at = end + 2;
      }
      if (allowed) break;  // the first matching pattern decides, as in httplib's own routing
      response.set_header("Allow", allow);
      // The body is never read, so the connection cannot carry another request after this one.
      if (request.has_header("Content-Length") && request.get_header_value("Content-Length") != "0")
        response.set_header("Connection", "close");
      send_error(response, 405, fmt::format("{} answers {}, not {}", request.path, allow, request.method));
      return httplib::Server::HandlerResponse::Handled;
    }
    if (request.method != "POST" && request.method != "PUT" && request.method != "PATCH") {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (request.has_header("Transfer-Encoding")) {
      response.set_header("Connection", "close");
      send_error(response, 411, "send the body with a Content-Length; chunked bodies are not accepted");
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string type = request.get_header_value("Content-Type");
    if (request.path.starts_with("/api/") && !type.starts_with("application/json")) {
      send_error(response, 415, "send JSON, with Content-Type: application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Every answer is JSON when it is an error, names no internal detail, and carries the headers
  // that keep a browser from sniffing types or framing the page.
  server.set_error_handler([](const Request&, Response& response) {
    if (response.body.empty()) {
      send_error(response, response.status, error_sentence(response.status));
    }
  });
  server.set_exception_handler([this](const Request& request, Response& response, std::exception_ptr error) {
    std::string what = "unknown";
    try {
      if (error) std::rethrow_exception(error);
    } catch (const StoreError& e) {
      // The store is away (or failed): the learner's request was fine; they try again shortly.
      fmt::print(stderr, "cudojo serve: {} {} failed: {}\n", request.method, request.path, e.what());
      if (http_status(e.code()) == 503)
        response.set_header("Retry-After", std::to_string(limits_.retry_after_seconds));
      return send_error(response, http_status(e.code()),
                        e.code() == StoreErrorCode::kUnavailable
                            ? "the database cannot be reached just now; try again shortly"
                            : "the database failed on this request; it has been logged");
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    fmt::print(stderr, "cudojo serve: {} {} failed: {}\n", request.method, request.path, what);
    send_error(response, 500, "the server failed on this request; it has been logged");
  });
  server.set_post_routing_handler([](const Request&, Response& response) {
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_header("Content-Security-Policy",
                        "default-src 'self'; script-src 'self'; img-src 'self' data:; "
                        "style-src 'self' 'unsafe-inline'; font-src 'self' data:; "
                        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    response.set_header("X-Frame-Options", "DENY");
    response.set_header("Referrer-Policy", "no-referrer");
  });

  // httplib calls a handler with (request, response); each route is one member function. Each
  // registration also records the path's methods for the 405 check above.
  using Handler = httplib::Server::Handler;
  auto route = [this](void (Api::*handler)(const Request&, Response&)) -> Handler {
    return
        [this, handler](const Request& request, Response& response) { (this->*handler)(request, response); };
  };
  std::vector<std::pair<std::string, std::string>> methods;  // pattern, "GET, PUT", in order
  auto allow = [&methods](const std::string& pattern, const char* method) {
    for (auto& [known, allowed] : methods) {
      if (known == pattern) return void(allowed += std::string(", ") + method);
    }
    methods.emplace_back(pattern, method);
  };
  auto get = [&](const std::string& pattern, Handler handler) {
    server.Get(pattern, std::move(handler));
    allow(pattern, "GET");
  };
  auto post = [&](const std::string& pattern, Handler handler) {
    server.Post(pattern, std::move(handler));
    allow(pattern, "POST");
  };
  auto put = [&](const std::string& pattern, Handler handler) {
    server.Put(pattern, std::move(handler));
    allow(pattern, "PUT");
  };
  get("/api/health", route(&Api::health));
  get("/api/nodes", route(&Api::list_nodes));
  get("/api/stages", route(&Api::list_stages));
  // Before /api/stages/(.+), which would take "reduction/3/leaderboard" as a stage id.
  get(R"(/api/stages/(.+)/leaderboard)", route(&Api::stage_leaderboard));
  get(R"(/api/stages/(.+))", route(&Api::get_stage));
  post("/api/learners", route(&Api::create_learner));
  post("/api/jobs", route(&Api::submit_job));
  get(R"(/api/jobs/([^/]+))", route(&Api::get_job));
  get(R"(/api/jobs/([^/]+)/events)", route(&Api::job_events));
  get("/api/history", route(&Api::history));
  get("/api/me", route(&Api::get_me));
  put("/api/me", route(&Api::put_me));
  get("/api/progress", route(&Api::progress));

  // The page's npm packages, read-only from their installed folders (scripts/setup.sh installs
  // them); a missing one is reported and the rest of the page still works.
  static constexpr std::array<std::array<const char*, 3>, 4> kVendor = {{
      {"/vendor/codemirror", "codemirror", "the editor"},
      {"/vendor/katex", "katex/dist", "lesson formulas (KaTeX)"},
      {"/vendor/highlight", "@highlightjs/cdn-assets", "code highlighting (highlight.js)"},
      {"/vendor/diff", "diff/dist", "comparing submissions (jsdiff)"},
  }};
  for (const auto& [mount, folder, what] : kVendor) {
    const fs::path path = web_dir_ / "node_modules" / folder;
    if (!server.set_mount_point(mount, path.string())) {
      fmt::print(stderr, "cudojo serve: {} is missing (run scripts/setup.sh); {} will not load\n",
                 path.string(), what);
    }
  }
  // The page's own files, each at its path under web/ (the favicon is one SVG under two names).
  get("/", route(&Api::redirect_to_page));
  static constexpr std::array<std::array<const char*, 2>, 7> kPageFiles = {{
      {"/index.html", "index.html"},
      {"/app.js", "app.js"},
      {"/style.css", "style.css"},
      {"/lesson.js", "lesson.js"},
      {"/lesson.css", "lesson.css"},
      {"/favicon.svg", "favicon.svg"},
      {"/favicon.ico", "favicon.svg"},
  }};
  for (const auto& [path, file] : kPageFiles) {
    const std::string name = file;
    get(path, [this, name](const Request&, Response& response) { web_file(name, response); });
  }
  // Diagrams by plain file name only: no '/', and no leading '.', so nothing outside the folder.
  get(R"(/diagrams/([A-Za-z0-9_-][A-Za-z0-9_.-]*\.svg))", [this](const Request& request, Response& response) {
    web_file("diagrams/" + std::string(request.matches[1]), response);
  });

  for (const auto& [pattern, allowed] : methods) allowed_methods_.emplace_back(std::regex(pattern), allowed);
}

void Api::health(const Request&, Response& response) {
  json health = {
      {"store", std::string(store_.kind())}, {"node", node_.name}, {"host", node_.host}, {"gpu", node_.gpu},
      {"workers", dispatcher_.workers()},    {"gpus", gpus_}};
  // A node whose store is away keeps serving pages and lessons, and says so here (503, so a load
  // balancer sends learners to a node that can take their submissions).
  if (auto problem = store_.problem()) {
    health["ok"] = false;
    health["database"] = *problem;
    health["error"] = *problem;
    return send_json(response, 503, health);
  }
  health["ok"] = true;
  health["database"] = "ok";
  health["pending"] = store_.pending_count();
  send_json(response, 200, health);
}

void Api::list_nodes(const Request&, Response& response) {
  json list = json::array();
  for (const NodeInfo& node : store_.nodes(limits_.node_listed_seconds)) {
    list.push_back({{"name", node.name},
                    {"host", node.host},
                    {"gpu", node.gpu},
                    {"workers", node.workers},
                    {"http", node.http},
                    {"started_at", node.started_at},
                    {"last_seen", node.last_seen}});
  }
  send_json(response, 200, list);
}

void Api::list_stages(const Request&, Response& response) {
  json list = json::array();
  for (const auto& stage : course_) list.push_back(stage_summary_json(stage));
  send_json(response, 200, list);
}

void Api::get_stage(const Request& request, Response& response) {
  const Stage* stage = find_stage(course_, request.matches[1]);
  if (!stage) return send_error(response, 404, fmt::format("no stage '{}'", std::string(request.matches[1])));
  // The same description `cudojo show --json` prints; only the HTML needs the server.
  json detail = stage_description_json(*stage);
  detail["lesson_html"] = markdown_to_html(stage->lesson_markdown);
  send_json(response, 200, detail);
}

void Api::stage_leaderboard(const Request& request, Response& response) {
  const Stage* stage = find_stage(course_, request.matches[1]);
  if (!stage) return send_error(response, 404, fmt::format("no stage '{}'", std::string(request.matches[1])));
  json entries = json::array();
  int rank = 0;
  for (const auto& entry : store_.leaderboard(stage->id, limits_.leaderboard_limit)) {
    entries.push_back({{"rank", ++rank},
                       {"name", entry.name},
                       {"time_ratio", entry.time_ratio},
                       {"time_ms", optional_json(entry.time_ms)},
                       {"language", entry.language},
                       {"at", static_cast<std::int64_t>(entry.at)}});
  }
  send_json(response, 200, {{"stage", stage->id}, {"entries", entries}});
}

void Api::create_learner(const Request& request, Response& response) {
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("name") || !body["name"].is_string()) {
    return send_error(response, 400, "send a JSON object {\"name\": \"...\"}");
  }
  {
    std::lock_guard lock(new_learners_mutex_);
    const auto now = std::chrono::steady_clock::now();
    auto& created = new_learners_by_address_[request.remote_addr];
    while (!created.empty() && now - created.front() > std::chrono::hours(1)) created.pop_front();
    if (static_cast<int>(created.size()) >= limits_.max_new_learners_per_address_per_hour) {
      response.set_header("Retry-After", "3600");
      return send_error(
          response, 429,
          fmt::format("this address has created {} learners in the last hour; sign in with a token "
                      "you already have",
                      limits_.max_new_learners_per_address_per_hour));
    }
    created.push_back(now);
  }
  if (auto problem = store_.problem()) return send_error(response, 503, *problem);
  try {
    IssuedLearner issued = store_.create_learner(body["name"].get<std::string>());
    send_json(response, 201,
              {{"id", issued.learner.id}, {"name", issued.learner.name}, {"token", issued.token}});
  } catch (const StoreError& error) {
    send_error(response, http_status(error.code()), error.what());
  }
}

void Api::submit_job(const Request& request, Response& response) {
  const auto learner = authenticate(store_, request);
  if (!learner) return send_error(response, 401, kSignInFirst);
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return send_error(response, 400, "the body is not a JSON object");
  if (!body.contains("stage") || !body["stage"].is_string() || !body.contains("source") ||
      !body["source"].is_string()) {
    return send_error(response, 400, "send {\"stage\": \"reduction/3\", \"source\": \"...\"}");
  }
  const Stage* stage = find_stage(course_, body["stage"].get<std::string>());
  if (!stage)
    return send_error(response, 400, fmt::format("no stage '{}'", body["stage"].get<std::string>()));
  const std::string source = body["source"].get<std::string>();
  if (auto too_large = source_size_error(source.size(), judge_limits_))
    return send_error(response, 413, *too_large);
  // A NUL byte ends a string in the database's protocol: refused here, for both stores alike, rather
  // than stored cut short.
  if (source.find('\0') != std::string::npos)
    return send_error(response, 400, "the source holds a NUL character (\\u0000); no compiler takes one");
  Language language = Language::kCuda;
  if (body.contains("language")) {
    const auto named =
        body["language"].is_string() ? parse_language(body["language"].get<std::string>()) : std::nullopt;
    if (!named) {
      return send_error(response, 400,
                        fmt::format("\"language\" is one of {} (default cuda)", language_list()));
    }
    language = *named;
  }
  // Idempotency-Key: the client's name for this submission, so that sending it again after a lost
  // answer (a dropped connection, a 503 while the database restarted) never queues it twice.
  const std::string key = request.get_header_value("Idempotency-Key");
  if (request.has_header("Idempotency-Key") &&
      (key.empty() || key.size() > 100 ||
       !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 127; }))) {
    return send_error(response, 400, "Idempotency-Key is 1 to 100 visible ASCII characters (a UUID, say)");
  }
  // Nothing is acknowledged that is not stored: SQLite still writes into a file deleted under it.
  if (auto problem = store_.problem()) return send_error(response, 503, *problem);
  Enqueued queued;
  try {
    queued = store_.submit({learner->id, stage->id, source, std::string(to_string(language)), key},
                           {limits_.max_queue_length, limits_.max_pending_per_learner});
  } catch (const StoreError& error) {
    if (http_status(error.code()) == 429 || http_status(error.code()) == 503) {
      response.set_header("Retry-After", std::to_string(limits_.retry_after_seconds));
    }
    return send_error(response, http_status(error.code()), error.what());
  }
  response.set_header("Location", fmt::format("/api/jobs/{}", queued.id));
  // The job is stored: from here on a failing read must not turn into an error, which a client
  // without a key would answer by queuing the submission again.
  auto stored = [&]<typename Read>(Read read) -> json {
    try {
      return read();
    } catch (const StoreError&) {
      return nullptr;
    }
  };
  if (queued.replayed) {
    // The job this key queued before, as it stands now.
    const json state = stored([&]() -> json {
      const auto job = store_.job(queued.id);
      return job ? json(std::string(to_string(job->state))) : json(nullptr);
    });
    return send_json(response, 200, {{"id", queued.id}, {"state", state}, {"replayed", true}});
  }
  dispatcher_.notify();
  send_json(response, 202,
            {{"id", queued.id}, {"state", "queued"}, {"position", stored([&]() -> json {
                                                        return store_.queue_position(queued.id);
                                                      })}});
}

std::optional<JobRecord> Api::owned_job(const Request& request, Response& response) {
  const auto learner = authenticate(store_, request);
  if (!learner) {
    send_error(response, 401, kSignInFirst);
    return std::nullopt;
  }
  const auto id = parse_id(request.matches[1]);
  auto job = id ? store_.job(*id) : std::nullopt;
  if (!job || job->learner_id != learner->id) {
    send_error(response, 404, "no such job among yours");
    return std::nullopt;
  }
  return job;
}

void Api::get_job(const Request& request, Response& response) {
  if (auto job = owned_job(request, response)) send_json(response, 200, job_json(store_, *job, true));
}

void Api::job_events(const Request& request, Response& response) {
  auto job = owned_job(request, response);
  if (!job) return;
  const std::int64_t id = job->id;
  if (open_event_streams_.fetch_add(1) >= limits_.max_event_streams) {
    open_event_streams_.fetch_sub(1);
    response.set_header("Retry-After", std::to_string(limits_.retry_after_seconds));
    return send_error(response, 429, "too many open event streams; poll GET /api/jobs/{id} instead");
  }
  response.set_header("Cache-Control", "no-cache");
  const auto opened = std::chrono::steady_clock::now();
  response.set_chunked_content_provider(
      "text/event-stream",
      [this, id, opened](std::size_t, httplib::DataSink& sink) {
        return stream_job_events(id, opened, sink);
      },
      [this](bool) { open_event_streams_.fetch_sub(1); });
}

bool Api::stream_job_events(std::int64_t job_id, std::chrono::steady_clock::time_point opened,
                            httplib::DataSink& sink) {
  // What was sent last (phase and queue position, or "done"): an event goes out only on a change.
  std::string last_sent;
  auto last_write = std::chrono::steady_clock::now();
  for (;;) {
    auto current = store_.job(job_id);
    if (!current) {
      sink.done();
      return true;
    }
    const bool done = current->state == JobState::kDone;
    const std::string event = done ? "result" : "progress";
    const std::string data = json_text(job_json(store_, *current, false));
    const std::string key =
        done ? "done" : current->phase + "/" + std::to_string(store_.queue_position(job_id));
    const auto now = std::chrono::steady_clock::now();
    if (key != last_sent) {
      last_sent = key;
      last_write = now;
      const std::string message = fmt::format("event: {}\ndata: {}\n\n", event, data);
      if (!sink.write(message.data(), message.size())) return false;
    } else if (now - last_write >= std::chrono::milliseconds(limits_.event_heartbeat_ms)) {
      // A comment line: ignored by EventSource, but the write fails once the client has gone.
      last_write = now;
      static constexpr char kHeartbeat[] = ": still here\n\n";
      if (!sink.is_writable() || !sink.write(kHeartbeat, sizeof kHeartbeat - 1)) return false;
    }
    const double open_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count();
    if (done || open_s > limits_.event_stream_max_seconds || ending_streams_) {
      sink.done();
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(limits_.event_poll_ms));
  }
}

void Api::history(const Request& request, Response& response) {
  const auto learner = authenticate(store_, request);
  if (!learner) return send_error(response, 401, kSignInFirst);
  std::optional<std::string> stage;
  if (request.has_param("stage")) {
    const Stage* found = find_stage(course_, request.get_param_value("stage"));
    if (!found)
      return send_error(response, 400, fmt::format("no stage '{}'", request.get_param_value("stage")));
    stage = found->id;
  }
  int limit = limits_.history_default_limit;
  if (request.has_param("limit")) {
    const auto asked = parse_id(request.get_param_value("limit"));
    if (!asked)
      return send_error(response, 400,
                        fmt::format("limit is a whole number from 1 to {}", limits_.history_limit));
    limit = static_cast<int>(std::min<std::int64_t>(*asked, limits_.history_limit));
  }
  std::optional<std::int64_t> before;
  if (request.has_param("before")) {
    before = parse_id(request.get_param_value("before"));
    if (!before) return send_error(response, 400, "before is a job id, as next_before gave it");
  }
  // One job more than the page shows says whether another page follows.
  auto jobs = store_.history(learner->id, stage, limit + 1, before);
  const bool more = static_cast<int>(jobs.size()) > limit;
  if (more) jobs.pop_back();
  json list = json::array();
  for (const auto& job : jobs) list.push_back(job_summary_json(job));
  send_json(response, 200, {{"jobs", list}, {"next_before", more ? json(jobs.back().id) : json(nullptr)}});
}

void Api::get_me(const Request& request, Response& response) {
  const auto learner = authenticate(store_, request);
  if (!learner) return send_error(response, 401, "this token belongs to no learner; sign in again");
  send_json(response, 200, learner_json(*learner));
}

void Api::put_me(const Request& request, Response& response) {
  const auto learner = authenticate(store_, request);
  if (!learner) return send_error(response, 401, "this token belongs to no learner; sign in again");
  json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object() || !body.contains("leaderboard") ||
      !body["leaderboard"].is_boolean()) {
    return send_error(response, 400, "send {\"leaderboard\": true} or {\"leaderboard\": false}");
  }
  if (auto problem = store_.problem()) return send_error(response, 503, *problem);
  try {
    const auto updated = store_.set_leaderboard(learner->id, body["leaderboard"].get<bool>());
    if (!updated) return send_error(response, 401, "this token belongs to no learner; sign in again");
    send_json(response, 200, learner_json(*updated));
  } catch (const StoreError& error) {
    send_error(response, http_status(error.code()), error.what());
  }
}

void Api::progress(const Request& request, Response& response) {
  const auto learner = authenticate(store_, request);
  if (!learner) return send_error(response, 401, kSignInFirst);
  json stages = json::object();
  for (const auto& stage : store_.progress(learner->id)) {
    stages[stage.stage] = {{"status", stage.accepted ? "accepted" : "attempted"},
                           {"attempts", stage.attempts},
                           {"best_time_ratio", optional_json(stage.best_time_ratio)},
                           {"best_time_ms", optional_json(stage.best_time_ms)},
                           {"last_job", stage.last_job}};
  }
  send_json(response, 200, {{"stages", stages}});
}

void Api::redirect_to_page(const Request&, Response& response) { response.set_redirect("/index.html"); }

void Api::web_file(const std::string& file, Response& response) {
  const fs::path path = web_dir_ / file;
  std::error_code error;
  std::ifstream in;
  if (fs::is_regular_file(path, error)) in.open(path, std::ios::binary);
  if (!in.is_open() || !in)
    return send_error(response, 404, fmt::format("{} is not in this installation's web folder", file));
  std::string body((std::istreambuf_iterator<char>(in)), {});
  const char* type = file.ends_with(".html")  ? "text/html; charset=utf-8"
                     : file.ends_with(".js")  ? "text/javascript; charset=utf-8"
                     : file.ends_with(".svg") ? "image/svg+xml"
                                              : "text/css; charset=utf-8";
  response.set_content(body, type);
}

}  // namespace cudojo

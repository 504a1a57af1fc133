#include "serve/api.h"

#include <fmt/format.h>

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
    case StoreErrorCode::kInternal:
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
         const ServeSettings& settings, int gpus)
    : store_(store),
      dispatcher_(dispatcher),
      course_(course),
      limits_(settings.limits),
      judge_limits_(settings.judge_limits),
      web_dir_(settings.web_dir),
      gpus_(gpus) {}

void Api::register_routes(httplib::Server& server) {
  // Before any route, and before a body is read: a body must say its length (the request limit is
  // enforced on Content-Length; a chunked body would not be bounded), and JSON routes take JSON
  // (a form or text/plain POST is what another site's page can send without asking).
  server.set_pre_routing_handler([](const Request& request, Response& response) {
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
  server.set_exception_handler([](const Request& request, Response& response, std::exception_ptr error) {
    std::string what = "unknown";
    try {
      if (error) std::rethrow_exception(error);
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
                        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    response.set_header("X-Frame-Options", "DENY");
    response.set_header("Referrer-Policy", "no-referrer");
  });

  // httplib calls a handler with (request, response); each route is one member function.
  auto route = [this](void (Api::*handler)(const Request&, Response&)) {
    return
        [this, handler](const Request& request, Response& response) { (this->*handler)(request, response); };
  };
  server.Get("/api/health", route(&Api::health));
  server.Get("/api/stages", route(&Api::list_stages));
  server.Get(R"(/api/stages/(.+))", route(&Api::get_stage));
  server.Post("/api/learners", route(&Api::create_learner));
  server.Post("/api/jobs", route(&Api::submit_job));
  server.Get(R"(/api/jobs/([^/]+))", route(&Api::get_job));
  server.Get(R"(/api/jobs/([^/]+)/events)", route(&Api::job_events));
  server.Get("/api/history", route(&Api::history));

  // The page, and the one npm package it loads (CodeMirror) from its installed folder.
  const fs::path codemirror = web_dir_ / "node_modules" / "codemirror";
  if (!server.set_mount_point("/vendor/codemirror", codemirror.string())) {
    fmt::print(stderr, "cudojo serve: {} is missing (run scripts/setup.sh); the editor will not load\n",
               codemirror.string());
  }
  server.Get("/", route(&Api::redirect_to_page));
  for (const char* file : {"/index.html", "/app.js", "/style.css"}) {
    server.Get(file, [this, file](const Request&, Response& response) { web_file(file, response); });
  }
}

void Api::health(const Request&, Response& response) {
  if (auto problem = store_.problem()) {
    return send_json(response, 503, {{"ok", false}, {"database", *problem}, {"error", *problem}});
  }
  send_json(response, 200,
            {{"ok", true},
             {"database", "ok"},
             {"workers", dispatcher_.workers()},
             {"gpus", gpus_},
             {"pending", store_.pending_count()}});
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
  // Nothing is acknowledged that is not stored: SQLite still writes into a file deleted under it.
  if (auto problem = store_.problem()) return send_error(response, 503, *problem);
  std::int64_t id = 0;
  try {
    id = store_.enqueue(learner->id, stage->id, source,
                        {limits_.max_queue_length, limits_.max_pending_per_learner},
                        std::string(to_string(language)));
  } catch (const StoreError& error) {
    if (http_status(error.code()) == 429) {
      response.set_header("Retry-After", std::to_string(limits_.retry_after_seconds));
    }
    return send_error(response, http_status(error.code()), error.what());
  }
  dispatcher_.notify();
  response.set_header("Location", fmt::format("/api/jobs/{}", id));
  send_json(response, 202, {{"id", id}, {"state", "queued"}, {"position", store_.queue_position(id)}});
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
  json list = json::array();
  for (const auto& job : store_.history(learner->id, stage, limits_.history_limit)) {
    list.push_back(job_json(store_, job, false));
  }
  send_json(response, 200, {{"learner", learner->name}, {"jobs", list}});
}

void Api::redirect_to_page(const Request&, Response& response) { response.set_redirect("/index.html"); }

void Api::web_file(const char* file, Response& response) {
  std::ifstream in(web_dir_ / (file + 1), std::ios::binary);
  if (!in) return send_error(response, 404, "the web folder is missing from this installation");
  std::string body((std::istreambuf_iterator<char>(in)), {});
  const std::string name(file);
  const char* type = name.ends_with(".html") ? "text/html; charset=utf-8"
                     : name.ends_with(".js") ? "text/javascript; charset=utf-8"
                                             : "text/css; charset=utf-8";
  response.set_content(body, type);
}

}  // namespace cudojo

#include "serve/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "compile/nvrtc_compiler.h"
#include "stage/contract_info.h"
#include "run/judge.h"
#include "serve/dispatcher.h"
#include "serve/markdown.h"
#include "serve/store.h"

namespace cudojo {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void send_json(httplib::Response& response, int status, const json& body) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_json(response, status, {{"error", message}});
}

json stage_summary(const Stage& stage) {
  return {{"id", stage.id},
          {"alias", stage.slug_id()},
          {"title", stage.title},
          {"summary", stage.summary},
          {"signature", describe_signature(stage)}};
}

json stage_detail(const Stage& stage) {
  json detail = stage;  // contract, kernel, launch, tests, gate
  detail.update(stage_summary(stage));
  detail["launch_text"] = describe_launch(stage);
  detail["driver"] = find_contract_info(stage.contract)->driver;
  detail["gate_text"] = describe_gate(stage);
  detail["lesson_markdown"] = stage.lesson_markdown;
  detail["lesson_html"] = markdown_to_html(stage.lesson_markdown);
  detail["starter"] = stage.starter_source;
  return detail;
}

json job_json(Store& store, const JobRecord& job, bool with_source) {
  json j = {{"id", job.id},
            {"stage", job.stage},
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

fs::path default_web_dir() {
  if (const char* env = std::getenv("CUDOJO_WEB"); env && *env) return env;
  const fs::path built = fs::path(CUDOJO_COURSE_DIR).parent_path() / "web";
  if (fs::exists(built / "index.html")) return built;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return exe.parent_path().parent_path() / "web";
}

fs::path default_data_dir() {
  if (const char* env = std::getenv("CUDOJO_DATA"); env && *env) return env;
  return fs::current_path() / "cudojo-data";
}

int count_gpus(const std::string& executable) {
  FILE* pipe = popen((executable + " gpus 2>/dev/null").c_str(), "r");
  if (!pipe) return 0;
  int count = 0;
  if (std::fscanf(pipe, "%d", &count) != 1) count = 0;
  pclose(pipe);
  return count;
}

int run_server(const std::vector<Stage>& course, const ServeSettings& settings) {
  // SIGINT and SIGTERM are taken by one thread with sigwait, so no handler runs inside the HTTP
  // or dispatcher threads (which inherit the blocked mask; workers get a clean one at spawn).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  Store store(settings.data_dir / "cudojo.sqlite3");
  const int requeued = store.requeue_interrupted();

  const std::string executable = self_executable();
  const int gpus = count_gpus(executable);
  Dispatcher::Settings dispatch;
  dispatch.workers = settings.workers >= 0 ? settings.workers : std::max(1, gpus);
  dispatch.pin_gpus = settings.workers < 0 && gpus > 0;
  dispatch.worker_executable = executable;
  dispatch.cuda_include_dir = default_cuda_include_dir();
  dispatch.calibration_dir = settings.calibration_dir.string();
  Dispatcher dispatcher(store, course, dispatch);

  httplib::Server server;
  server.set_payload_max_length(settings.limits.max_request_bytes);
  const ServeLimits& limits = settings.limits;
  const JudgeLimits& judge_limits = settings.judge_limits;

  server.Get("/api/health", [&](const httplib::Request&, httplib::Response& response) {
    send_json(response, 200,
              {{"ok", true},
               {"workers", dispatcher.workers()},
               {"gpus", gpus},
               {"pending", store.pending_count()}});
  });

  server.Get("/api/stages", [&](const httplib::Request&, httplib::Response& response) {
    json list = json::array();
    for (const auto& stage : course) list.push_back(stage_summary(stage));
    send_json(response, 200, list);
  });

  server.Get(R"(/api/stages/(.+))", [&](const httplib::Request& request, httplib::Response& response) {
    const Stage* stage = find_stage(course, request.matches[1]);
    if (!stage)
      return send_error(response, 404, fmt::format("no stage '{}'", std::string(request.matches[1])));
    send_json(response, 200, stage_detail(*stage));
  });

  server.Post("/api/learners", [&](const httplib::Request& request, httplib::Response& response) {
    json body = json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("name") || !body["name"].is_string()) {
      return send_error(response, 400, "send a JSON object {\"name\": \"...\"}");
    }
    try {
      IssuedLearner issued = store.create_learner(body["name"].get<std::string>());
      send_json(response, 201,
                {{"id", issued.learner.id}, {"name", issued.learner.name}, {"token", issued.token}});
    } catch (const StoreError& error) {
      const bool taken = std::string(error.what()).find("taken") != std::string::npos;
      send_error(response, taken ? 409 : 400, error.what());
    }
  });

  server.Post("/api/jobs", [&](const httplib::Request& request, httplib::Response& response) {
    const auto learner = authenticate(store, request);
    if (!learner) return send_error(response, 401, "sign in first: POST /api/learners gives a token");
    json body = json::parse(request.body, nullptr, false);
    if (body.is_discarded() || !body.is_object())
      return send_error(response, 400, "the body is not a JSON object");
    if (!body.contains("stage") || !body["stage"].is_string() || !body.contains("source") ||
        !body["source"].is_string()) {
      return send_error(response, 400, "send {\"stage\": \"reduction/3\", \"source\": \"...\"}");
    }
    const Stage* stage = find_stage(course, body["stage"].get<std::string>());
    if (!stage)
      return send_error(response, 400, fmt::format("no stage '{}'", body["stage"].get<std::string>()));
    const std::string source = body["source"].get<std::string>();
    if (source.size() > judge_limits.max_source_bytes) {
      return send_error(response, 413,
                        fmt::format("the source is {} bytes; the limit is {} bytes", source.size(),
                                    judge_limits.max_source_bytes));
    }
    if (store.pending_count() >= limits.max_queue_length) {
      response.set_header("Retry-After", std::to_string(limits.retry_after_seconds));
      return send_error(response, 429, "the queue is full; try again shortly");
    }
    if (store.pending_count(learner->id) >= limits.max_pending_per_learner) {
      response.set_header("Retry-After", std::to_string(limits.retry_after_seconds));
      return send_error(
          response, 429,
          fmt::format("you already have {} jobs waiting or running", limits.max_pending_per_learner));
    }
    const std::int64_t id = store.enqueue(learner->id, stage->id, source);
    dispatcher.notify();
    response.set_header("Location", fmt::format("/api/jobs/{}", id));
    send_json(response, 202, {{"id", id}, {"state", "queued"}, {"position", store.queue_position(id)}});
  });

  auto owned_job = [&](const httplib::Request& request,
                       httplib::Response& response) -> std::optional<JobRecord> {
    const auto learner = authenticate(store, request);
    if (!learner) {
      send_error(response, 401, "sign in first: POST /api/learners gives a token");
      return std::nullopt;
    }
    const auto id = parse_id(request.matches[1]);
    auto job = id ? store.job(*id) : std::nullopt;
    if (!job || job->learner_id != learner->id) {
      send_error(response, 404, "no such job among yours");
      return std::nullopt;
    }
    return job;
  };

  server.Get(R"(/api/jobs/([^/]+))", [&](const httplib::Request& request, httplib::Response& response) {
    if (auto job = owned_job(request, response)) send_json(response, 200, job_json(store, *job, true));
  });

  server.Get(R"(/api/jobs/([^/]+)/events)",
             [&](const httplib::Request& request, httplib::Response& response) {
               auto job = owned_job(request, response);
               if (!job) return;
               const std::int64_t id = job->id;
               response.set_header("Cache-Control", "no-cache");
               auto last_sent = std::make_shared<std::string>();
               const auto started = std::chrono::steady_clock::now();
               response.set_chunked_content_provider(
                   "text/event-stream", [&, id, last_sent, started](std::size_t, httplib::DataSink& sink) {
                     for (;;) {
                       auto current = store.job(id);
                       if (!current) {
                         sink.done();
                         return true;
                       }
                       const bool done = current->state == JobState::kDone;
                       const std::string event = done ? "result" : "progress";
                       const std::string data = job_json(store, *current, false).dump();
                       const std::string key =
                           done ? "done" : current->phase + "/" + std::to_string(store.queue_position(id));
                       if (key != *last_sent) {
                         *last_sent = key;
                         const std::string message = fmt::format("event: {}\ndata: {}\n\n", event, data);
                         if (!sink.write(message.data(), message.size())) return false;
                       }
                       const double open_s =
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                       if (done || open_s > limits.event_stream_max_seconds) {
                         sink.done();
                         return true;
                       }
                       std::this_thread::sleep_for(std::chrono::milliseconds(150));
                     }
                   });
             });

  server.Get("/api/history", [&](const httplib::Request& request, httplib::Response& response) {
    const auto learner = authenticate(store, request);
    if (!learner) return send_error(response, 401, "sign in first: POST /api/learners gives a token");
    std::optional<std::string> stage;
    if (request.has_param("stage")) {
      const Stage* found = find_stage(course, request.get_param_value("stage"));
      if (!found)
        return send_error(response, 400, fmt::format("no stage '{}'", request.get_param_value("stage")));
      stage = found->id;
    }
    json list = json::array();
    for (const auto& job : store.history(learner->id, stage, limits.history_limit)) {
      list.push_back(job_json(store, job, false));
    }
    send_json(response, 200, {{"learner", learner->name}, {"jobs", list}});
  });

  // The page, and the one npm package it loads (CodeMirror) from its installed folder.
  const fs::path codemirror = settings.web_dir / "node_modules" / "codemirror";
  if (!server.set_mount_point("/vendor/codemirror", codemirror.string())) {
    fmt::print(stderr, "cudojo serve: {} is missing (run scripts/setup.sh); the editor will not load\n",
               codemirror.string());
  }
  server.Get("/", [&](const httplib::Request&, httplib::Response& response) {
    response.set_redirect("/index.html");
  });
  for (const char* file : {"/index.html", "/app.js", "/style.css"}) {
    server.Get(file, [&, file](const httplib::Request&, httplib::Response& response) {
      std::ifstream in(settings.web_dir / (file + 1), std::ios::binary);
      if (!in) return send_error(response, 404, "the web folder is missing from this installation");
      std::string body((std::istreambuf_iterator<char>(in)), {});
      const std::string name(file);
      const char* type = name.ends_with(".html") ? "text/html; charset=utf-8"
                         : name.ends_with(".js") ? "text/javascript; charset=utf-8"
                                                 : "text/css; charset=utf-8";
      response.set_content(body, type);
    });
  }

  const int port = settings.port == 0 ? server.bind_to_any_port(settings.host) : settings.port;
  if (settings.port != 0 && !server.bind_to_port(settings.host, settings.port)) {
    fmt::print(stderr, "cudojo serve: cannot listen on {}:{}\n", settings.host, settings.port);
    return 2;
  }
  if (port < 0) {
    fmt::print(stderr, "cudojo serve: cannot listen on {}\n", settings.host);
    return 2;
  }
  dispatcher.start();
  std::thread stopper([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
  });
  fmt::print("cudojo serve: http://{}:{}/  data {}  workers {} ({} GPU{})  requeued {}\n", settings.host,
             port, settings.data_dir.string(), dispatch.workers, gpus, gpus == 1 ? "" : "s", requeued);
  std::fflush(stdout);
  server.listen_after_bind();
  // Reached after a stop signal: let running jobs finish and record their verdicts.
  pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  dispatcher.stop();
  return 0;
}

}  // namespace cudojo

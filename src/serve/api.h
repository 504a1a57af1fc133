// The routes of `cudojo serve`: the JSON API and the page, one member function per route, all
// registered in one place (register_routes). Routes only read and write the Store and wake the
// Dispatcher; judging happens on the Dispatcher's threads. docs/openapi.yaml describes the API.
//
// run_server (server.cc) owns the Store, the Dispatcher and the httplib server, builds one Api
// over them and registers it; the Api must outlive the server's listening loop, because an open
// event stream calls back into it after its route has returned.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "common/limits.h"
#include "serve/server.h"
#include "serve/store.h"
#include "stage/stage.h"

namespace cudojo {

class Dispatcher;

class Api {
 public:
  // node: this process as registered in the store; gpus: visible GPUs, as counted at start-up
  // (both reported by /api/health).
  Api(Store& store, Dispatcher& dispatcher, const std::vector<Stage>& course, const ServeSettings& settings,
      NodeInfo node, int gpus);

  // Every route, in the order httplib tries them.
  void register_routes(httplib::Server& server);
  // The server is stopping: every open event stream ends at its next poll.
  void end_event_streams() { ending_streams_ = true; }

 private:
  using Request = httplib::Request;
  using Response = httplib::Response;

  // GET /api/health
  void health(const Request& request, Response& response);
  // GET /api/nodes: the nodes serving and judging from this store, as they registered
  void list_nodes(const Request& request, Response& response);
  // GET /api/stages
  void list_stages(const Request& request, Response& response);
  // GET /api/stages/{id or alias}
  void get_stage(const Request& request, Response& response);
  // GET /api/stages/{id or alias}/leaderboard
  void stage_leaderboard(const Request& request, Response& response);
  // POST /api/learners
  void create_learner(const Request& request, Response& response);
  // POST /api/jobs
  void submit_job(const Request& request, Response& response);
  // GET /api/jobs/{id}
  void get_job(const Request& request, Response& response);
  // GET /api/jobs/{id}/events (server-sent events)
  void job_events(const Request& request, Response& response);
  // GET /api/history[?stage=&limit=&before=]
  void history(const Request& request, Response& response);
  // GET /api/me
  void get_me(const Request& request, Response& response);
  // PUT /api/me
  void put_me(const Request& request, Response& response);
  // GET /api/progress
  void progress(const Request& request, Response& response);
  // GET /
  void redirect_to_page(const Request& request, Response& response);
  // GET /index.html, /app.js, /favicon.svg, /diagrams/x.svg, ...: `file` is the path under web/.
  void web_file(const std::string& file, Response& response);

  // The requester's job named by the route's first capture; answers 401 or 404 itself and
  // returns nullopt when the request is not signed in or the job is not the requester's.
  std::optional<JobRecord> owned_job(const Request& request, Response& response);
  // The body of an event stream: polls the job and sends its state each time it changes, until
  // the job is done or the stream has been open too long. False when the client went away.
  bool stream_job_events(std::int64_t job_id, std::chrono::steady_clock::time_point opened,
                         httplib::DataSink& sink);

  Store& store_;
  Dispatcher& dispatcher_;
  const std::vector<Stage>& course_;
  ServeLimits limits_;
  JudgeLimits judge_limits_;
  std::filesystem::path web_dir_;
  // Every registered route's pattern and the methods it answers ("GET, PUT"), filled by
  // register_routes: a known path asked with another method answers 405 with Allow.
  std::vector<std::pair<std::regex, std::string>> allowed_methods_;
  NodeInfo node_;
  int gpus_;
  std::atomic<int> open_event_streams_{0};
  std::atomic<bool> ending_streams_{false};
  // When each client address created its learners in the last hour (oldest first).
  std::mutex new_learners_mutex_;
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> new_learners_by_address_;
};

}  // namespace cudojo

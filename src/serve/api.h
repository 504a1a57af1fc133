// The routes of `cudojo serve`: the JSON API and the page, one member function per route, all
// registered in one place (register_routes), each saying who may call it. Routes only read and
// write the Store, wake the Dispatcher and hand streams to JobStreams; judging happens on the
// Dispatcher's threads. docs/openapi.yaml describes the API.
//
// Who may call what: anyone (no sign-in) the page's files, the stages and lessons, the
// leaderboards, /api/health and /api/nodes, and POST /api/learners; a learner, signed in by
// "Authorization: Bearer <token>", only their own jobs, history, progress and account. A job that
// is not the caller's answers 404, as one that does not exist. A token is read from the header
// only (never the URL, which proxies log); an event stream, which a browser opens without headers,
// takes a short-lived ticket instead (serve/stream_ticket.h).
//
// run_server (server.cc) owns the Store, the Dispatcher, the JobStreams and the HTTP server,
// builds one Api over them and registers it; the Api and the JobStreams outlive the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/limits.h"
#include "http/message.h"
#include "http/router.h"
#include "http/static_files.h"
#include "serve/job_streams.h"
#include "serve/server.h"
#include "serve/store.h"
#include "serve/stream_ticket.h"
#include "serve/watched_store.h"
#include "stage/stage.h"

namespace cudojo {

class Dispatcher;

class Api {
 public:
  // node: this process as registered in the store; gpus: visible GPUs, as counted at start-up
  // (both reported by /api/health).
  Api(WatchedStore& store, Dispatcher& dispatcher, JobStreams& streams, const std::vector<Stage>& course,
      const ServeSettings& settings, NodeInfo node, int gpus);

  // Every route, and the page's files (which are read into memory here).
  void register_routes(http::Router& router);
  // Sees a request before its body is read, on the event loop: refuses what no route takes (non-JSON
  // to the API), and what is refused without the store (no token for a learner's route, a sign-up
  // past its address's hourly limit).
  bool before_body(const http::Request& head, http::Response& response) const;
  // A route threw: the cause goes to the log, a fixed sentence to the client.
  void on_exception(const http::Request& request, http::Response& response, std::exception_ptr error) const;
  // The headers every answer carries (no sniffing, no framing, the content security policy).
  static std::vector<http::Header> answer_headers();

 private:
  using Request = http::Request;
  using Response = http::Response;

  // --- The course and the server (api_course.cc); anyone may call these.
  void health(const Request& request, Response& response);             // GET /api/health
  void list_nodes(const Request& request, Response& response);         // GET /api/nodes
  void list_stages(const Request& request, Response& response);        // GET /api/stages
  void get_stage(const Request& request, Response& response);          // GET /api/stages/{id or alias}
  void stage_leaderboard(const Request& request, Response& response);  // GET /api/stages/{id}/leaderboard

  // --- Learners (api_learners.cc).
  void create_learner(const Request& request, Response& response);  // POST /api/learners: anyone
  void get_me(const Request& request, Response& response);          // GET /api/me: the learner
  void put_me(const Request& request, Response& response);          // PUT /api/me: the learner
  void history(const Request& request, Response& response);         // GET /api/history: the learner's own
  void progress(const Request& request, Response& response);        // GET /api/progress: the learner's own

  // --- Jobs (api_jobs.cc): a learner's own only.
  void submit_job(const Request& request, Response& response);  // POST /api/jobs
  void get_job(const Request& request, Response& response);     // GET /api/jobs/{id}
  void job_ticket(const Request& request, Response& response);  // POST /api/jobs/{id}/ticket
  void job_events(const Request& request, Response& response);  // GET /api/jobs/{id}/events

  // The signed-in learner ("Authorization: Bearer <token>"), or nullopt.
  std::optional<Learner> signed_in(const Request& request);
  // The requester's job named by the route's first capture; answers 401 or 404 itself and
  // returns nullopt when the request is not signed in or the job is not the requester's.
  std::optional<JobRecord> owned_job(const Request& request, Response& response);
  // Answers a refused or failed Store call: the learner's mistakes and the queue's limits with
  // their sentence, the store's own failures with a fixed one (the cause goes to the log).
  void answer_store_error(const Request& request, Response& response, const StoreError& error) const;
  // The 429 sentence of a sign-up past its address's hourly limit.
  std::string sign_up_refusal() const;
  // Whether the store can take a write now; answers 503 itself when it cannot.
  bool store_usable(const Request& request, Response& response);

  WatchedStore& store_;
  Dispatcher& dispatcher_;
  JobStreams& streams_;
  const std::vector<Stage>& course_;
  ServeLimits limits_;
  JudgeLimits judge_limits_;
  std::filesystem::path web_dir_;
  http::StaticFiles page_files_;
  NodeInfo node_;
  int gpus_;
  UsedStreamTickets used_tickets_;
  // When each client address created its learners in the last hour (oldest first).
  mutable std::mutex new_learners_mutex_;
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> new_learners_by_address_;
};

}  // namespace cudojo

// The routes of `cudojo serve`: the JSON API and the page, one member function per route, all
// registered in one place (register_routes), each saying who may call it. Routes only read and
// write the Store, wake the Dispatcher and hand streams to JobStreams; judging happens on the
// Dispatcher's threads. docs/openapi.yaml describes the API.
//
// Who may call what (register_routes says it beside every route; docs/openapi.yaml per route):
// - anyone (no sign-in): the page's files, the stages and lessons, /api/health and /api/nodes, the
//   default class's leaderboards, signing up (POST /api/learners, when open sign-up is on) and joining
//   a class by its invite code (POST /api/join);
// - anyone holding a link a learner made to one of their finished jobs (GET /api/shared/{token}):
//   that job, read-only, without anything of the learner;
// - a learner, signed in by "Authorization: Bearer <token>": only their own jobs (and the links to
//   them), drafts, history, progress and account, and their own class's leaderboards;
// - a member of staff (the same header, a staff token): the classes they hold a role in, as that
//   role allows (serve/classroom.h: a teaching assistant reads, an instructor also changes); an
//   administrator, every class and the staff accounts.
// - any signed-in account, a learner's or a member of staff's: what a source becomes on the machine
//   (POST /api/assembly), which reads and stores nothing of anyone's.
// A learner never sees another learner's work. An object of a class the caller has no role in
// answers 404, as one that does not exist; a route for another kind of account answers 403. A token
// is read from the header only (never the URL, which proxies log); an event stream, which a browser
// opens without headers, takes a short-lived ticket instead (serve/stream_ticket.h).
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
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/limits.h"
#include "http/message.h"
#include "http/router.h"
#include "http/static_files.h"
#include "serve/classroom.h"
#include "serve/course_catalog.h"
#include "serve/job_streams.h"
#include "serve/server.h"
#include "serve/store.h"
#include "serve/store_rejudging.h"
#include "serve/stream_ticket.h"
#include "serve/watched_store.h"
#include "stage/stage.h"

namespace cudojo {

class Dispatcher;

class Api {
 public:
  // node: this process as registered in the store; gpus: visible GPUs, as counted at start-up
  // (both reported by /api/health).
  Api(WatchedStore& store, Dispatcher& dispatcher, JobStreams& streams, CourseCatalog& course,
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
  // The GPU that judges this server's jobs, whose calibration the lessons' figures come from; ""
  // when none does.
  std::string judging_gpu();

  // --- Learners (api_learners.cc).
  void create_learner(const Request& request, Response& response);  // POST /api/learners: anyone
  void join_class(const Request& request, Response& response);      // POST /api/join: anyone with a code
  void get_me(const Request& request, Response& response);          // GET /api/me: learner or staff
  void put_me(const Request& request, Response& response);          // PUT /api/me: the learner
  void history(const Request& request, Response& response);         // GET /api/history: the learner's own
  void progress(const Request& request, Response& response);        // GET /api/progress: the learner's own

  // --- Drafts (api_drafts.cc): the learner's own.
  void list_drafts(const Request& request, Response& response);   // GET /api/drafts
  void put_draft(const Request& request, Response& response);     // PUT /api/drafts/{stage}/{language}
  void delete_draft(const Request& request, Response& response);  // DELETE /api/drafts/{stage}/{language}

  // --- Classes and staff (api_classes.cc).
  void list_classes(const Request& request, Response& response);        // GET /api/classes: staff, their own
  void create_class(const Request& request, Response& response);        // POST /api/classes: admin
  void get_class(const Request& request, Response& response);           // GET /api/classes/{id}: its staff
  void change_class(const Request& request, Response& response);        // PATCH /api/classes/{id}: instructor
  void add_class_staff(const Request& request, Response& response);     // POST .../staff: instructor
  void remove_class_staff(const Request& request, Response& response);  // DELETE .../staff/{id}: instructor
  void class_audit(const Request& request, Response& response);         // GET .../audit: its staff
  void list_staff(const Request& request, Response& response);          // GET /api/staff: admin
  void create_staff(const Request& request, Response& response);        // POST /api/staff: admin
  void reset_staff_token(const Request& request, Response& response);   // POST /api/staff/{id}/token: admin
  void server_audit(const Request& request, Response& response);        // GET /api/audit: admin

  // --- A class's learners (api_roster.cc).
  void list_roster(const Request& request, Response& response);     // GET .../learners: its staff
  void import_roster(const Request& request, Response& response);   // POST .../roster: instructor
  void change_learner(const Request& request, Response& response);  // PATCH .../learners/{id}: instructor
  void reset_learner_token(const Request& request,
                           Response& response);                   // POST .../learners/{id}/token: instructor
  void issue_tokens(const Request& request, Response& response);  // POST .../tokens: instructor
  void learner_history(const Request& request, Response& response);  // GET .../learners/{id}/jobs: its staff
  void class_job(const Request& request, Response& response);        // GET .../jobs/{id}: its staff

  // --- Progress, exports and deadlines (api_grid.cc).
  void class_grid(const Request& request, Response& response);    // GET .../grid: its staff
  void class_export(const Request& request, Response& response);  // GET .../export: its staff
  void set_deadline(const Request& request, Response& response);  // PUT .../deadlines/{stage}: instructor
  void clear_deadline(const Request& request,
                      Response& response);  // DELETE .../deadlines/{stage}: instructor

  // --- Rejudgings, stage versions and the course's reload (api_rejudging.cc).
  void list_class_rejudgings(const Request& request, Response& response);   // GET .../rejudgings: its staff
  void create_class_rejudging(const Request& request, Response& response);  // POST .../rejudgings: instructor
  void get_class_rejudging(const Request& request, Response& response);     // GET .../rejudgings/{id}: staff
  void apply_class_rejudging(const Request& request, Response& response);   // POST .../{id}/apply: instructor
  void cancel_class_rejudging(const Request& request,
                              Response& response);                    // POST .../{id}/cancel: instructor
  void class_versions(const Request& request, Response& response);    // GET .../versions: its staff
  void list_rejudgings(const Request& request, Response& response);   // GET /api/rejudgings: admin
  void create_rejudging(const Request& request, Response& response);  // POST /api/rejudgings: admin
  void get_rejudging(const Request& request, Response& response);     // GET /api/rejudgings/{id}: admin
  void apply_rejudging(const Request& request, Response& response);   // POST .../{id}/apply: admin
  void cancel_rejudging(const Request& request, Response& response);  // POST .../{id}/cancel: admin
  void course_versions(const Request& request, Response& response);   // GET /api/course/versions: admin
  void reload_course(const Request& request, Response& response);     // POST /api/course/reload: admin
  // What those share: make one for `class_id` (none: every class), show one, apply or cancel one.
  void start_rejudging(const Request& request, Response& response, std::optional<std::int64_t> class_id,
                       const Actor& actor);
  void show_rejudging(const Request& request, Response& response, const Rejudging& rejudging);
  void end_rejudging(const Request& request, Response& response, const Rejudging& rejudging,
                     const Actor& actor, bool apply);
  void end_any_rejudging(const Request& request, Response& response, bool apply);
  std::optional<Rejudging> class_rejudging(const Request& request, Response& response, std::int64_t class_id);
  nlohmann::json versions_json(std::optional<std::int64_t> class_id);

  // --- Jobs (api_jobs.cc): a learner's own only.
  void submit_job(const Request& request, Response& response);    // POST /api/jobs
  void get_job(const Request& request, Response& response);       // GET /api/jobs/{id}
  void withdraw_job(const Request& request, Response& response);  // DELETE /api/jobs/{id}
  void job_ticket(const Request& request, Response& response);    // POST /api/jobs/{id}/ticket
  void job_events(const Request& request, Response& response);    // GET /api/jobs/{id}/events
  // GET /api/jobs/{id}/ncu-report: whoever may read the job (its learner, its class's staff, admins).
  void job_ncu_report(const Request& request, Response& response);

  // --- Links to one job (api_shares.cc): made, read and stopped by the job's owner; opened by anyone.
  void create_share(const Request& request, Response& response);  // POST /api/jobs/{id}/share
  void get_share(const Request& request, Response& response);     // GET /api/jobs/{id}/share
  void revoke_share(const Request& request, Response& response);  // DELETE /api/jobs/{id}/share
  void open_share(const Request& request, Response& response);    // GET /api/shared/{token}: anyone
  // The class's live links: its staff list them, and its instructors stop one.
  void list_class_shares(const Request& request, Response& response);  // GET /api/classes/{c}/shares
  void stop_class_share(const Request& request, Response& response);   // DELETE .../jobs/{id}/share

  // --- The machine's view of a source (api_assembly.cc): any signed-in account.
  void show_assembly(const Request& request, Response& response);  // POST /api/assembly

  // The signed-in learner ("Authorization: Bearer <token>"), or nullopt.
  std::optional<Learner> signed_in(const Request& request);
  // Who holds the request's token: a learner, a member of staff, or nobody.
  struct Caller {
    std::optional<Learner> learner;
    std::optional<StaffAccount> staff;
  };
  Caller caller(const Request& request);
  // The signed-in learner; answers 401 (no known token) or 403 (a staff token) itself otherwise.
  std::optional<Learner> learner_or_refuse(const Request& request, Response& response);
  // The signed-in member of staff (an administrator when `admin_only`); answers 401 or 403 itself
  // otherwise.
  std::optional<StaffAccount> staff_or_refuse(const Request& request, Response& response, bool admin_only);
  // The class named by the route's first capture, for a member of staff allowed `needed` in it. A
  // learner gets 403; staff without a role there, or a class that does not exist, 404 (the same
  // answer, so nobody learns which classes exist); a teaching assistant asking to change it, 403.
  struct StaffInClass {
    StaffAccount staff;
    ClassInfo class_info;
    Actor actor() const;
  };
  std::optional<StaffInClass> class_for(const Request& request, Response& response, ClassAccess needed);
  // The job `id_text` names, of a learner of the class, and that learner; nullopt after answering 404.
  struct JobInClass {
    JobRecord job;
    RosterEntry learner;
  };
  std::optional<JobInClass> job_in_class(const StaffInClass& found, const std::string& id_text,
                                         Response& response);
  // A page's ?limit= (history_default_limit when not given, history_limit at most); false after
  // answering 400.
  bool page_limit(const Request& request, Response& response, int& limit) const;
  // The class the leaderboards of a request show: the learner's own; for staff, ?class=ID (one they
  // hold a role in); for anyone else the default class. nullopt after answering 404 itself.
  std::optional<ClassInfo> leaderboard_class(const Request& request, Response& response, bool& sees_hidden);
  // `shown` (a job as job_json shows it) with "late": whether the job was submitted after its stage's
  // deadline in the class of its learner.
  nlohmann::json with_lateness(nlohmann::json shown, const JobRecord& job, std::int64_t class_id);
  // `shown` with "stage_version" (the version the job was judged under, when its report says) and
  // "stage_version_current" (whether that is the course's version of the stage now).
  nlohmann::json with_version(nlohmann::json shown, const JobRecord& job);
  // The requester's job named by the route's first capture; answers 401 or 404 itself and
  // returns nullopt when the request is not signed in or the job is not the requester's.
  // `owner`, when given, receives the signed-in learner.
  std::optional<JobRecord> owned_job(const Request& request, Response& response, Learner* owner = nullptr);
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
  CourseCatalog& course_;
  ServeLimits limits_;
  bool open_sign_up_;
  bool profiling_;  // profiled jobs may be asked for (ServeSettings::profiling)
  JudgeLimits judge_limits_;
  std::filesystem::path web_dir_;
  http::StaticFiles page_files_;
  NodeInfo node_;
  int gpus_;
  UsedStreamTickets used_tickets_;
  // Whether `learner_id` may save a draft now (max_draft_saves_per_minute); counts the save when so,
  // answers 429 itself when not.
  bool take_draft_save(std::int64_t learner_id, Response& response);
  std::mutex draft_saves_mutex_;
  std::map<std::int64_t, std::deque<std::chrono::steady_clock::time_point>> draft_saves_;
  // Whether `address` may try another invite code (max_failed_joins_per_address_per_hour); a wrong one
  // is counted by count_failed_join.
  bool may_try_invite(const std::string& address);
  void count_failed_join(const std::string& address);
  std::mutex failed_joins_mutex_;
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> failed_joins_;
  // Whether an export by `actor` of `class_id` goes into the audit log now: once per actor and class
  // in ten minutes, so that exporting in a loop cannot push everything else out of the log's pages.
  bool export_worth_recording(const Actor& actor, std::int64_t class_id);
  std::mutex exports_mutex_;
  std::map<std::pair<std::string, std::int64_t>, std::chrono::steady_clock::time_point> last_export_recorded_;
  // The accounts ("learner:ID", "staff:ID") whose assembly is being compiled now: one each, and a few
  // in all (api_assembly.cc), as each is seconds of the server's CPU.
  std::mutex assemblies_mutex_;
  std::set<std::string> assembling_accounts_;
  // When each client address created its learners in the last hour (oldest first).
  mutable std::mutex new_learners_mutex_;
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>> new_learners_by_address_;
};

}  // namespace cudojo

// The Api's registration, its checks before a body is read, who is calling, and what it answers when a
// route or the store fails. The routes themselves are in api_course.cc, api_learners.cc, api_jobs.cc,
// api_drafts.cc, api_classes.cc, api_roster.cc and api_grid.cc.
#include "serve/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "http/client_address.h"
#include "serve/api_internal.h"
#include "serve/dispatcher.h"
#include "serve/page_files.h"

namespace cudojo {

using api_internal::kSignInFirst;
using api_internal::send_error;
using http::Runs;

namespace api_internal {

std::optional<std::int64_t> parse_id(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  std::int64_t id = 0;
  std::from_chars(text.data(), text.data() + text.size(), id);
  if (id <= 0) return std::nullopt;
  return id;
}

bool read_language(const nlohmann::json& body, Language& language, std::string& error) {
  if (!body.contains("language")) return true;
  const auto named =
      body["language"].is_string() ? parse_language(body["language"].get<std::string>()) : std::nullopt;
  if (!named) {
    error = fmt::format("\"language\" is one of {} (default cuda)", language_list());
    return false;
  }
  language = *named;
  return true;
}

}  // namespace api_internal

Api::Api(WatchedStore& store, Dispatcher& dispatcher, JobStreams& streams, CourseCatalog& course,
         const ServeSettings& settings, NodeInfo node, int gpus)
    : store_(store),
      dispatcher_(dispatcher),
      streams_(streams),
      course_(course),
      limits_(settings.limits),
      open_sign_up_(settings.open_sign_up),
      profiling_(settings.profiling),
      judge_limits_(settings.judge_limits),
      web_dir_(settings.web_dir),
      node_(std::move(node)),
      gpus_(gpus) {}

std::vector<http::Header> Api::answer_headers() {
  return {{"X-Content-Type-Options", "nosniff"},
          {"Content-Security-Policy",
           "default-src 'self'; script-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
           "font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"}};
}

void Api::register_routes(http::Router& router) {
  // Each route is one member function; where it runs and who may call it is said beside it (and
  // in api.h).
  auto route = [this](void (Api::*handler)(const Request&, Response&)) -> http::Handler {
    return
        [this, handler](const Request& request, Response& response) { (this->*handler)(request, response); };
  };
  // Anyone.
  router.add("GET", "/api/health", route(&Api::health));
  router.add("GET", "/api/nodes", route(&Api::list_nodes));
  router.add("GET", "/api/stages", route(&Api::list_stages), Runs::kOnEventLoop);
  // Before /api/stages/(.+), which would take "reduction/3/leaderboard" as a stage id. Anyone sees
  // the default class's board; a learner their own class's; staff one of their classes' (?class=).
  router.add("GET", R"(/api/stages/(.+)/leaderboard)", route(&Api::stage_leaderboard));
  // Renders the lesson's Markdown: a handler thread, so the event loop never waits on cmark.
  router.add("GET", R"(/api/stages/(.+))", route(&Api::get_stage));
  router.add("POST", "/api/learners", route(&Api::create_learner));  // open sign-up, when on
  router.add("POST", "/api/join", route(&Api::join_class));          // with a class's invite code
  // Anyone holding a link a learner made to one of their finished jobs: that job, read-only.
  router.add("GET", R"(/api/shared/(.*))", route(&Api::open_share));
  // Whoever is signed in: their own account (a learner's or a member of staff's).
  router.add("GET", "/api/me", route(&Api::get_me));
  // Whoever is signed in, learner or staff: what a source becomes on the machine. Seconds of CPU, so
  // bounded per account and server-wide (api_assembly.cc); a handler thread, never the event loop.
  router.add("POST", "/api/assembly", route(&Api::show_assembly));
  // The signed-in learner, about their own account, jobs and drafts.
  router.add("PUT", "/api/me", route(&Api::put_me));
  router.add("POST", "/api/jobs", route(&Api::submit_job));
  router.add("GET", R"(/api/jobs/([^/]+))", route(&Api::get_job));
  router.add("DELETE", R"(/api/jobs/([^/]+))", route(&Api::withdraw_job));
  router.add("POST", R"(/api/jobs/([^/]+)/ticket)", route(&Api::job_ticket));
  router.add("GET", R"(/api/jobs/([^/]+)/events)", route(&Api::job_events));
  // Whoever may read the job: its learner, the staff of its learner's class, an administrator.
  router.add("GET", R"(/api/jobs/([^/]+)/ncu-report)", route(&Api::job_ncu_report));
  router.add("POST", R"(/api/jobs/([^/]+)/share)", route(&Api::create_share));
  router.add("GET", R"(/api/jobs/([^/]+)/share)", route(&Api::get_share));
  router.add("DELETE", R"(/api/jobs/([^/]+)/share)", route(&Api::revoke_share));
  router.add("GET", "/api/history", route(&Api::history));
  router.add("GET", "/api/progress", route(&Api::progress));
  router.add("GET", "/api/drafts", route(&Api::list_drafts));
  router.add("PUT", R"(/api/drafts/(.+)/([^/]+))", route(&Api::put_draft));
  router.add("DELETE", R"(/api/drafts/(.+)/([^/]+))", route(&Api::delete_draft));
  // Staff: the classes they hold a role in (reading: instructor or teaching assistant; changing:
  // instructor); administrators every class.
  router.add("GET", "/api/classes", route(&Api::list_classes));
  router.add("POST", "/api/classes", route(&Api::create_class));  // administrators
  router.add("GET", R"(/api/classes/([^/]+))", route(&Api::get_class));
  router.add("PATCH", R"(/api/classes/([^/]+))", route(&Api::change_class));
  router.add("GET", R"(/api/classes/([^/]+)/grid)", route(&Api::class_grid));
  router.add("GET", R"(/api/classes/([^/]+)/export)", route(&Api::class_export));
  router.add("GET", R"(/api/classes/([^/]+)/audit)", route(&Api::class_audit));
  router.add("GET", R"(/api/classes/([^/]+)/learners)", route(&Api::list_roster));
  router.add("POST", R"(/api/classes/([^/]+)/roster)", route(&Api::import_roster));
  router.add("POST", R"(/api/classes/([^/]+)/tokens)", route(&Api::issue_tokens));
  router.add("PATCH", R"(/api/classes/([^/]+)/learners/([^/]+))", route(&Api::change_learner));
  router.add("POST", R"(/api/classes/([^/]+)/learners/([^/]+)/token)", route(&Api::reset_learner_token));
  router.add("GET", R"(/api/classes/([^/]+)/learners/([^/]+)/jobs)", route(&Api::learner_history));
  router.add("GET", R"(/api/classes/([^/]+)/jobs/([^/]+))", route(&Api::class_job));
  router.add("GET", R"(/api/classes/([^/]+)/shares)", route(&Api::list_class_shares));
  router.add("DELETE", R"(/api/classes/([^/]+)/jobs/([^/]+)/share)", route(&Api::stop_class_share));
  router.add("PUT", R"(/api/classes/([^/]+)/deadlines/(.+))", route(&Api::set_deadline));
  router.add("DELETE", R"(/api/classes/([^/]+)/deadlines/(.+))", route(&Api::clear_deadline));
  router.add("POST", R"(/api/classes/([^/]+)/staff)", route(&Api::add_class_staff));
  router.add("DELETE", R"(/api/classes/([^/]+)/staff/([^/]+))", route(&Api::remove_class_staff));
  router.add("GET", R"(/api/classes/([^/]+)/rejudgings)", route(&Api::list_class_rejudgings));
  router.add("POST", R"(/api/classes/([^/]+)/rejudgings)", route(&Api::create_class_rejudging));
  router.add("GET", R"(/api/classes/([^/]+)/rejudgings/([^/]+))", route(&Api::get_class_rejudging));
  router.add("POST", R"(/api/classes/([^/]+)/rejudgings/([^/]+)/apply)", route(&Api::apply_class_rejudging));
  router.add("POST", R"(/api/classes/([^/]+)/rejudgings/([^/]+)/cancel)",
             route(&Api::cancel_class_rejudging));
  router.add("GET", R"(/api/classes/([^/]+)/versions)", route(&Api::class_versions));
  // Administrators: rejudgings of any class or all, the course's versions and its reload.
  router.add("GET", "/api/rejudgings", route(&Api::list_rejudgings));
  router.add("POST", "/api/rejudgings", route(&Api::create_rejudging));
  router.add("GET", R"(/api/rejudgings/([^/]+))", route(&Api::get_rejudging));
  router.add("POST", R"(/api/rejudgings/([^/]+)/apply)", route(&Api::apply_rejudging));
  router.add("POST", R"(/api/rejudgings/([^/]+)/cancel)", route(&Api::cancel_rejudging));
  router.add("GET", "/api/course/versions", route(&Api::course_versions));
  router.add("POST", "/api/course/reload", route(&Api::reload_course));
  // Administrators: the staff accounts and the whole server's audit log.
  router.add("GET", "/api/staff", route(&Api::list_staff));
  router.add("POST", "/api/staff", route(&Api::create_staff));
  router.add("POST", R"(/api/staff/([^/]+)/token)", route(&Api::reset_staff_token));
  router.add("GET", "/api/audit", route(&Api::server_audit));

  // The page: its files from memory, on the event loop (anyone).
  router.add_exact(
      "GET", "/", [](const Request&, Response& response) { response.set_redirect("/index.html"); },
      Runs::kOnEventLoop);
  const PageFileList found = find_page_files(web_dir_);
  for (const std::string& missing : found.missing)
    fmt::print(stderr, "cudojo serve: {}; run scripts/setup.sh (the page will lack it)\n", missing);
  for (const PageFile& file : found.files) {
    if (auto problem = page_files_.add(file.url, file.file)) {
      fmt::print(stderr, "cudojo serve: {}\n", *problem);
      continue;
    }
    router.add_exact(
        "GET", file.url,
        [this, url = file.url](const Request& request, Response& response) {
          page_files_.answer(url, request, response);
        },
        Runs::kOnEventLoop);
  }
}

bool Api::before_body(const http::Request& head, http::Response& response) const {
  // JSON routes take JSON: a form or text/plain POST is what another site's page can send without
  // asking.
  const bool sends_body = head.method == "POST" || head.method == "PUT" || head.method == "PATCH";
  if (sends_body && head.path.starts_with("/api/") &&
      !head.header_value("Content-Type").starts_with("application/json")) {
    send_error(response, 415, "send JSON, with Content-Type: application/json");
    return true;
  }
  // Refusals that need no store are answered here, on the event loop, without taking a handler
  // thread: a burst of them costs the server an answer each and delays no one's real request.
  const bool learners_own = head.path == "/api/jobs" || head.path.starts_with("/api/jobs/") ||
                            head.path == "/api/history" || head.path == "/api/progress" ||
                            head.path == "/api/me" || head.path == "/api/drafts" ||
                            head.path.starts_with("/api/drafts/");
  const bool staffs_own = head.path == "/api/classes" || head.path.starts_with("/api/classes/") ||
                          head.path == "/api/staff" || head.path.starts_with("/api/staff/") ||
                          head.path == "/api/audit" || head.path.starts_with("/api/rejudgings") ||
                          head.path.starts_with("/api/course/");
  const bool opens_with_ticket = head.path.ends_with("/events") && head.has_param("ticket");
  if (head.path.ends_with("/events") && head.has_param("token")) {
    send_error(response, 400, api_internal::kTokenInUrl);
    return true;
  }
  if ((learners_own || staffs_own) && !opens_with_ticket &&
      !head.header_value("Authorization").starts_with("Bearer ")) {
    send_error(
        response, 401,
        head.path == "/api/me" ? "this token belongs to no learner; sign in again"
        : staffs_own
            ? "sign in first: send \"Authorization: Bearer <token>\" with a member of staff's token (an "
              "administrator's comes from `cudojo admin create` on the server)"
            : kSignInFirst);
    return true;
  }
  if (head.method == "POST" && head.path == "/api/learners" && open_sign_up_) {
    std::lock_guard lock(new_learners_mutex_);
    const auto found = new_learners_by_address_.find(http::address_group(head.client_address));
    const auto now = std::chrono::steady_clock::now();
    if (found != new_learners_by_address_.end() &&
        std::count_if(found->second.begin(), found->second.end(), [&](auto at) {
          return now - at <= std::chrono::hours(1);
        }) >= limits_.max_new_learners_per_address_per_hour) {
      response.set_header("Retry-After", "3600");
      send_error(response, 429, sign_up_refusal());
      return true;
    }
  }
  return false;
}

std::string Api::sign_up_refusal() const {
  return fmt::format(
      "this address has created {} learners in the last hour; sign in with a token you already have",
      limits_.max_new_learners_per_address_per_hour);
}

void Api::on_exception(const http::Request& request, http::Response& response,
                       std::exception_ptr error) const {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const StoreError& e) {
    return answer_store_error(request, response, e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cudojo serve: {} {} failed: {}\n", request.method, request.path, e.what());
  } catch (...) {
    fmt::print(stderr, "cudojo serve: {} {} failed\n", request.method, request.path);
  }
  send_error(response, 500, http::error_sentence(500));
}

void Api::answer_store_error(const http::Request& request, http::Response& response,
                             const StoreError& error) const {
  const std::string retry_after = std::to_string(limits_.retry_after_seconds);
  switch (error.code()) {
    case StoreErrorCode::kInvalidName:
      return send_error(response, 400, error.what());
    case StoreErrorCode::kNameTaken:
    case StoreErrorCode::kConflict:
      return send_error(response, 409, error.what());
    case StoreErrorCode::kKeyReused:
      return send_error(response, 422, error.what());
    case StoreErrorCode::kNotAllowed:
      return send_error(response, 403, error.what());
    case StoreErrorCode::kQueueFull:
    case StoreErrorCode::kLearnerBusy:
    case StoreErrorCode::kAddressBusy:
      response.set_header("Retry-After", retry_after);
      return send_error(response, 429, error.what());
    case StoreErrorCode::kTooManyJoins:
      response.set_header("Retry-After", "600");
      return send_error(response, 429, error.what());
    case StoreErrorCode::kUnavailable:
    case StoreErrorCode::kInternal:
      break;
  }
  // The store's own failure: the request was fine, and the client tries again shortly. Its cause
  // (SQL, a path, the database's words) is for the log only.
  fmt::print(stderr, "cudojo serve: {} {}: the store failed: {}\n", request.method, request.path,
             error.what());
  response.set_header("Retry-After", retry_after);
  send_error(
      response, 503,
      error.code() == StoreErrorCode::kUnavailable
          ? "the database cannot be reached just now; try again shortly"
          : "the server could not save or read this just now; try again shortly (the cause is in its log)");
}

bool Api::store_usable(const http::Request& request, http::Response& response) {
  // Nothing is acknowledged that is not stored: SQLite still writes into a file deleted under it.
  const auto problem = store_.problem();
  if (!problem) return true;
  fmt::print(stderr, "cudojo serve: {} {}: {}\n", request.method, request.path, *problem);
  response.set_header("Retry-After", std::to_string(limits_.retry_after_seconds));
  send_error(response, 503, "the server's database is gone or does not answer; it has been logged");
  return false;
}

std::optional<Learner> Api::signed_in(const http::Request& request) {
  const std::string header = request.header_value("Authorization");
  if (!header.starts_with("Bearer ")) return std::nullopt;
  return store_.find_learner_by_token(header.substr(7));
}

Api::Caller Api::caller(const http::Request& request) {
  const std::string header = request.header_value("Authorization");
  if (!header.starts_with("Bearer ")) return {};
  const std::string token = header.substr(7);
  if (auto learner = store_.find_learner_by_token(token)) return {std::move(learner), std::nullopt};
  return {std::nullopt, store_.classes().find_staff_by_token(token)};
}

std::optional<Learner> Api::learner_or_refuse(const http::Request& request, http::Response& response) {
  Caller who = caller(request);
  if (who.learner) return who.learner;
  if (who.staff) {
    send_error(response, 403,
               "this is a learner's route and the token is a member of staff's; sign in as a learner to "
               "submit kernels");
  } else {
    send_error(response, 401, kSignInFirst);
  }
  return std::nullopt;
}

std::optional<StaffAccount> Api::staff_or_refuse(const http::Request& request, http::Response& response,
                                                 bool admin_only) {
  Caller who = caller(request);
  if (!who.learner && !who.staff) {
    send_error(response, 401, "this token belongs to nobody here; sign in again");
    return std::nullopt;
  }
  if (who.learner || (admin_only && !who.staff->admin)) {
    send_error(response, 403,
               admin_only ? "only an administrator may do this" : "only a class's staff may do this");
    return std::nullopt;
  }
  return who.staff;
}

Actor Api::StaffInClass::actor() const { return staff_actor(staff, class_info.id); }

std::optional<Api::StaffInClass> Api::class_for(const http::Request& request, http::Response& response,
                                                ClassAccess needed) {
  auto staff = staff_or_refuse(request, response, false);
  if (!staff) return std::nullopt;
  const auto id = api_internal::parse_id(request.match(1));
  const ClassAccess access = id ? class_access(*staff, *id) : ClassAccess::kNone;
  std::optional<ClassInfo> found =
      access == ClassAccess::kNone ? std::nullopt : store_.classes().find_class(*id);
  if (!found) {
    send_error(response, 404, "no such class among yours");
    return std::nullopt;
  }
  if (needed == ClassAccess::kChange && access != ClassAccess::kChange) {
    send_error(response, 403, "a teaching assistant reads a class; only its instructors change it");
    return std::nullopt;
  }
  return StaffInClass{std::move(*staff), std::move(*found)};
}

std::optional<Api::JobInClass> Api::job_in_class(const StaffInClass& found, const std::string& id_text,
                                                 http::Response& response) {
  const auto job_id = api_internal::parse_id(id_text);
  auto job = job_id ? store_.job(*job_id) : std::nullopt;
  auto learner = job ? store_.classes().roster_entry(found.class_info.id, job->learner_id) : std::nullopt;
  if (!learner) {
    send_error(response, 404, "no such job in this class");
    return std::nullopt;
  }
  return JobInClass{std::move(*job), std::move(*learner)};
}

bool Api::page_limit(const http::Request& request, http::Response& response, int& limit) const {
  limit = limits_.history_default_limit;
  const auto asked_text = request.param("limit");
  if (!asked_text) return true;
  const auto asked = api_internal::parse_id(*asked_text);
  if (!asked) {
    send_error(response, 400, fmt::format("limit is a whole number from 1 to {}", limits_.history_limit));
    return false;
  }
  limit = static_cast<int>(std::min<std::int64_t>(*asked, limits_.history_limit));
  return true;
}

}  // namespace cudojo

// POST /api/assembly (issue #28), the server side of the page's Assembly tab: what a source becomes
// on the machine, as `cudojo asm --json` shows it (run/assembly.h): the resources ptxas reports for
// the learner's kernels beside the reference's, and the PTX and SASS tied to source lines. Any
// signed-in account may ask (a learner, or staff reading the course); nothing is stored and no GPU
// is used.
//
// The compile is CPU work of up to seconds (NVRTC in its own process, or Numba or rustc in the
// sandbox, then ptxas, for the learner's kernel and the reference), so it runs on a handler thread
// and is bounded twice: one in flight per account (a second answers 429: the page sends one at a
// time, a script sending many waits its turn), and a few across the server (past them 503), so a
// class opening the tab together leaves cores for the judge's own compiles.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "run/assembly.h"
#include "serve/api.h"
#include "serve/api_internal.h"

namespace cudojo {

using api_internal::send_error;
using api_internal::send_json;
using nlohmann::json;

namespace {

// Assemblies compiled at once across the server: one a core, at most four.
std::size_t max_assemblies_at_once() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
}

// An account's place among the assemblies in flight, taken when there is one and given back when
// the answer has been made, whatever happened in between.
class AssemblyPlace {
 public:
  enum class Refusal { kNone, kAccountBusy, kServerBusy };

  AssemblyPlace(std::mutex& mutex, std::set<std::string>& accounts, std::string account)
      : mutex_(mutex), accounts_(accounts), account_(std::move(account)) {
    std::lock_guard lock(mutex_);
    if (accounts_.contains(account_))
      refusal_ = Refusal::kAccountBusy;
    else if (accounts_.size() >= max_assemblies_at_once())
      refusal_ = Refusal::kServerBusy;
    else
      accounts_.insert(account_);
  }
  ~AssemblyPlace() {
    if (refusal_ != Refusal::kNone) return;
    std::lock_guard lock(mutex_);
    accounts_.erase(account_);
  }
  AssemblyPlace(const AssemblyPlace&) = delete;
  AssemblyPlace& operator=(const AssemblyPlace&) = delete;

  Refusal refusal() const { return refusal_; }

 private:
  std::mutex& mutex_;
  std::set<std::string>& accounts_;
  std::string account_;
  Refusal refusal_ = Refusal::kNone;
};

constexpr const char* kBodyShape =
    "send {\"stage\": \"reduction/3\", \"language\": \"cuda\", \"source\": \"...\", \"ptx\": true, "
    "\"sass\": true} (language, ptx and sass may be left out: cuda, false, false)";

// The optional flag `name` of `body` into `value`; false when it is there and not true or false.
bool read_flag(const json& body, const char* name, bool& value) {
  if (!body.contains(name)) return true;
  if (!body[name].is_boolean()) return false;
  value = body[name].get<bool>();
  return true;
}

}  // namespace

void Api::show_assembly(const Request& request, Response& response) {
  const Caller who = caller(request);
  if (!who.learner && !who.staff)
    return send_error(response, 401,
                      "sign in first: send \"Authorization: Bearer <token>\" with a learner's or a member of "
                      "staff's token");
  const std::string account =
      who.learner ? fmt::format("learner:{}", who.learner->id) : fmt::format("staff:{}", who.staff->id);

  const json body = json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return send_error(response, 400, "the body is not a JSON object");
  AssemblyRequest wanted;
  if (!body.contains("stage") || !body["stage"].is_string() || !body.contains("source") ||
      !body["source"].is_string() || !read_flag(body, "ptx", wanted.ptx) ||
      !read_flag(body, "sass", wanted.sass))
    return send_error(response, 400, kBodyShape);
  if (std::string error; !api_internal::read_language(body, wanted.language, error))
    return send_error(response, 400, error);
  const auto course = course_.current();  // kept while its stage is used
  const std::string stage_id = body["stage"].get<std::string>();
  wanted.stage = find_stage(course->stages, stage_id);
  if (!wanted.stage) return send_error(response, 404, fmt::format("no stage '{}'", stage_id));
  wanted.source = body["source"].get<std::string>();
  if (auto too_large = source_size_error(wanted.source.size(), judge_limits_))
    return send_error(response, 413, *too_large);
  if (wanted.source.find('\0') != std::string::npos)
    return send_error(response, 400, "the source holds a NUL character (\\u0000); no compiler takes one");
  // The name the judge gives a submission, so diagnostics and line ties read as a run's do.
  wanted.file_name = "submission" + std::string(source_extension(wanted.language));
  wanted.limits = judge_limits_;

  const AssemblyPlace place(assemblies_mutex_, assembling_accounts_, account);
  const std::string retry_after = std::to_string(limits_.retry_after_seconds);
  switch (place.refusal()) {
    case AssemblyPlace::Refusal::kNone:
      break;
    case AssemblyPlace::Refusal::kAccountBusy:
      response.set_header("Retry-After", retry_after);
      return send_error(response, 429,
                        "your previous assembly is still being compiled; ask again when it has answered");
    case AssemblyPlace::Refusal::kServerBusy:
      response.set_header("Retry-After", retry_after);
      return send_error(
          response, 503,
          fmt::format("the server is compiling {} assemblies already, its limit; try again shortly",
                      max_assemblies_at_once()));
  }
  AssemblyView view;
  try {
    view = view_assembly(wanted);
  } catch (const std::runtime_error& error) {
    // No assembler on this server: nothing to show, whatever the source; the operator installs it.
    if (!std::string_view(error.what()).starts_with("ptxas")) throw;
    return send_error(response, 503,
                      fmt::format("this server cannot show assembly: {}; its operator installs the CUDA "
                                  "toolkit's ptxas or names one with CUDOJO_PTXAS",
                                  error.what()));
  }
  send_json(response, 200, json(view));
}

}  // namespace cudojo

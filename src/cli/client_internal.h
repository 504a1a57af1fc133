// What the terminal client's commands share (cli/client_commands.cc): the signed-in server's settings,
// errors turned into one sentence and an exit code, and following a job until its verdict
// (cli/client_follow.cc).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/cli_common.h"
#include "cli/client_commands.h"
#include "client/api_client.h"
#include "client/http_client.h"
#include "client/server_book.h"

namespace cudojo::cli::client_internal {

std::filesystem::path servers_file(const ServerChoice& where);
// The URL, token and CA of the server `where` names; UsageError when none was logged in to.
client::ClientSettings settings_for(const ServerChoice& where);

// What went wrong, in a sentence that says what to do next, and the exit code that says whose
// problem it is (kExitUsage: the command line or the config; kExitServer: the server).
struct Failure {
  int code;
  std::string kind;
  std::string message;
};

Failure describe(const client::ApiError& error);
// Says `failure` on `err` (and as one JSON object on `out` under --json); its exit code.
int report(const Failure& failure, std::ostream& out, std::ostream& err, bool json_output);

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
  } catch (const client::ConnectionError& error) {
    failure = {kExitServer, "server_unreachable", error.what()};
  } catch (const client::ApiError& error) {
    failure = describe(error);
  } catch (const std::exception& error) {  // a bug of ours: still one line, and JSON under --json
    failure = {kExitUsage, "internal_error", fmt::format("internal error: {}", error.what())};
  }
  return report(failure, out, err, json_output);
}

// A time as the learner's clock shows it, to the minute.
std::string local_time(double seconds);
// Sleeps up to `seconds`, waking early on Ctrl-C.
void nap(double seconds);
bool interrupted();

// One line of progress: "queued, 3 ahead", "compiling", "tests", ...
std::string progress_text(const nlohmann::json& job);
// Polls the job until it is done, saying each change on `err` (`already_said`, what the caller said of
// it, is not said again). Ctrl-C withdraws a queued job when `withdraw` (submit's own job; `status`
// only looks) and leaves a running one.
int follow_job(client::ApiClient& api, std::int64_t id, const FollowOptions& options, std::ostream& out,
               std::ostream& err, bool withdraw, std::string already_said = "");

}  // namespace cudojo::cli::client_internal

// The terminal client's shared pieces (cli/client_internal.h): which server, what went wrong, and
// Ctrl-C.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

#include "cli/client_internal.h"
#include "common/json_text.h"
#include "common/time_text.h"

namespace cudojo::cli {

namespace {

std::atomic<bool> g_interrupted{false};

}  // namespace

void request_interrupt() { g_interrupted = true; }
void reset_interrupt() { g_interrupted = false; }
bool mark_interrupt() { return g_interrupted.exchange(true); }

namespace client_internal {

namespace fs = std::filesystem;
using client::ApiError;

bool interrupted() { return g_interrupted; }

fs::path servers_file(const ServerChoice& where) {
  return where.servers_file.empty() ? client::default_server_book_path() : where.servers_file;
}

client::ClientSettings settings_for(const ServerChoice& where) {
  const client::ServerBook book = client::ServerBook::load(servers_file(where));
  const auto entry = book.find(where.server);
  if (!entry) {
    if (where.server == "default")
      throw UsageError(
          "not logged in to a server: run `cudojo login URL --token TOKEN` (or --invite CODE --name "
          "NAME) first");
    throw UsageError(fmt::format("no server named '{}' in {}: run `cudojo login URL --as {}` first",
                                 where.server, book.file().string(), where.server));
  }
  client::ClientSettings settings;
  settings.url = entry->url;
  settings.token = entry->token;
  settings.cacert = entry->cacert;
  return settings;
}

namespace {

std::string retry_text(const ApiError& error) {
  return error.retry_after ? fmt::format("; try again in {} s", *error.retry_after) : "; try again later";
}

}  // namespace

Failure describe(const ApiError& error) {
  const std::string what = error.what();
  switch (error.status) {
    case 401:
      return {kExitServer, "token_refused", "the server refused the token; cudojo login again"};
    case 429:
      return {kExitServer, "server_busy",
              fmt::format("the server is busy: {} (HTTP 429{})", what, retry_text(error))};
    case 503:
      return {kExitServer, "server_unavailable",
              fmt::format("the server cannot take it now: {} (HTTP 503{})", what, retry_text(error))};
    default:
      if (error.not_cudojo) return {kExitServer, "not_cudojo", what};
      return {kExitServer, "server_refused",
              fmt::format("the server said: {} (HTTP {}{})", what, error.status,
                          error.status == 404 ? "; is the URL the page's address, with no path?" : "")};
  }
}

int report(const Failure& failure, std::ostream& out, std::ostream& err, bool json_output) {
  err << "cudojo: " << failure.message << "\n";
  if (json_output)
    out << json_text({{"error", failure.message}, {"kind", failure.kind}, {"exit_code", failure.code}}, 2)
        << "\n";
  return failure.code;
}

std::string local_time(double seconds) { return time_text(seconds, "%Y-%m-%d %H:%M", TimeZone::kLocal); }

void nap(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!interrupted() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace client_internal

}  // namespace cudojo::cli

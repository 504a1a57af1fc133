// The terminal as a client of a class server (issue #27): `cudojo login`, `logout`, `submit`,
// `status`, `history` and `pull` talk to a `cudojo serve` over its JSON API (src/client/), so a
// learner on a laptop without a GPU sends kernels to the class's judge and reads the same report
// `cudojo check` prints. Each command is a function of its options and two streams, so tests run
// them in-process against a real server; add_client_commands / run_client_command put them on the
// command line.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace cudojo::cli {

// The server could not be reached or refused the request (usage and config problems are 2,
// kExitUsage; a verdict's code is check's).
inline constexpr int kExitServer = 3;
// Ctrl-C stopped the command (128 + SIGINT, as a shell reports it).
inline constexpr int kExitInterrupted = 130;

// Which logged-in server a command talks to: its name in the servers file (empty file: the
// default, $XDG_CONFIG_HOME/cudojo/servers.json).
struct ServerChoice {
  std::string server = "default";
  std::filesystem::path servers_file;
};

struct LoginOptions {
  ServerChoice where;  // where.server is the name it is saved as (--as)
  std::string url;
  std::string token;  // empty: $CUDOJO_TOKEN, unless joining by invite code
  std::string invite;
  std::string name;
  std::string cacert;
};

// How a followed job is shown: progress on `err`, the verdict on `out`.
struct FollowOptions {
  bool json = false;
  bool colour = false;
  double poll_seconds = 0.5;
  int reconnect_tries = 5;  // failed polls in a row before giving up (one a second)
};

struct SubmitOptions {
  ServerChoice where;
  std::string stage;
  std::string file;
  std::string lang;
  bool no_wait = false;
  FollowOptions follow;
};

struct StatusOptions {
  ServerChoice where;
  std::int64_t job = 0;
  FollowOptions follow;
};

struct HistoryOptions {
  ServerChoice where;
  std::string stage;
  int limit = 20;
  std::optional<std::int64_t> before;  // only jobs older than this one
  bool json = false;
};

struct PullOptions {
  ServerChoice where;
  std::string stage;
  std::string output;  // empty: stdout
  bool force = false;
};

// Each returns its exit code and prints its errors on `err` (never the token).
int run_login(const LoginOptions& options, std::ostream& out, std::ostream& err);
int run_logout(const ServerChoice& where, std::ostream& out, std::ostream& err);
int run_submit(const SubmitOptions& options, std::ostream& out, std::ostream& err);
int run_status(const StatusOptions& options, std::ostream& out, std::ostream& err);
int run_history(const HistoryOptions& options, std::ostream& out, std::ostream& err);
int run_pull(const PullOptions& options, std::ostream& out, std::ostream& err);

// What Ctrl-C does while a job is followed: the SIGINT handler calls request_interrupt (it only
// sets a flag, so it is safe in a handler); tests call it from another thread. A queued job is
// withdrawn; a running one is left to run. reset_interrupt clears the flag.
void request_interrupt();
void reset_interrupt();
// Marks a Ctrl-C (safe in a signal handler); true when one was marked already.
bool mark_interrupt();

struct ClientCommands {
  CLI::App* login = nullptr;
  CLI::App* logout = nullptr;
  CLI::App* submit = nullptr;
  CLI::App* status = nullptr;
  CLI::App* history = nullptr;
  CLI::App* pull = nullptr;
  LoginOptions login_options;
  ServerChoice logout_options;
  SubmitOptions submit_options;
  StatusOptions status_options;
  HistoryOptions history_options;
  PullOptions pull_options;
};

// Adds the six commands to `app`; the options fill the returned object when the line is parsed.
std::unique_ptr<ClientCommands> add_client_commands(CLI::App& app);
// Runs the one that was parsed (installing the SIGINT handler): its exit code, or nullopt when none
// of them was asked for.
std::optional<int> run_client_command(ClientCommands& commands);

}  // namespace cudojo::cli

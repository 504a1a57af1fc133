// The fixture of the terminal client's tests (issue #27): each command of src/cli/client_commands.h
// run in-process against a real `cudojo serve` (tests/api/api_test_support.h) on loopback. No GPU:
// a broken kernel ends as compile_error, which is the learner's path these tests follow; a server
// with --workers 0 keeps a job queued for the Ctrl-C and lost-server cases.
#pragma once

#include <sys/stat.h>

#include <future>

#include "../api/api_test_support.h"
#include "cli/cli_common.h"
#include "cli/client_commands.h"
#include "report/verdict.h"

namespace cudojo::client_testing {

using namespace api_testing;
using cli::kExitServer;

struct Ran {
  int code = -1;
  std::string out;
  std::string err;
};

class ClientCommand : public Api {
 protected:
  void SetUp() override {
    Api::SetUp();
    if (IsSkipped()) return;
    servers_ = data_ / "config" / "cudojo" / "servers.json";
    cli::reset_interrupt();
    // These run in-process on loopback: a proxy in the shell that runs them is not theirs to use.
    for (const char* name : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) unsetenv(name);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(front_port()); }
  cli::ServerChoice where() const { return {"default", servers_}; }

  Ran login_with_token(const std::string& token) {
    cli::LoginOptions options;
    options.where = where();
    options.url = url();
    options.token = token;
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_login(options, out, err); });
  }
  Ran submit(const std::string& file, bool no_wait = false, bool json = false, int tries = 5) {
    cli::SubmitOptions options;
    options.where = where();
    options.stage = "reduction/2";
    options.file = file;
    options.no_wait = no_wait;
    options.follow.json = json;
    options.follow.poll_seconds = 0.1;
    options.follow.reconnect_tries = tries;
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_submit(options, out, err); });
  }
  Ran history(bool json = false) {
    cli::HistoryOptions options;
    options.where = where();
    options.json = json;
    return call([&](std::ostream& out, std::ostream& err) { return cli::run_history(options, out, err); });
  }
  // After a login, the history is there and empty.
  void expect_empty_history() {
    const Ran listed = history();
    EXPECT_EQ(listed.code, 0) << listed.err;
    EXPECT_NE(listed.out.find("no jobs yet"), std::string::npos) << listed.out;
  }
  template <typename Body>
  static Ran call(Body&& body) {
    std::ostringstream out, err;
    Ran ran;
    ran.code = body(out, err);
    ran.out = out.str();
    ran.err = err.str();
    return ran;
  }
  static std::int64_t job_id_in(const std::string& text) {
    const auto at = text.find("job ");
    return at == std::string::npos ? 0 : std::stoll(text.substr(at + 4));
  }
  std::string broken_kernel() const { return testing::submission("reduction-2/compile_error.cu"); }

  fs::path servers_;
};

}  // namespace cudojo::client_testing

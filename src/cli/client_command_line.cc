// The client commands on the command line: their options and help (CLI11), and which one runs,
// with Ctrl-C caught for submit and status. The commands themselves are in client_commands.cc.
#include <fmt/format.h>
#include <signal.h>

#include <iostream>

#include "cli/cli_common.h"
#include "cli/client_commands.h"

namespace cudojo::cli {

namespace {

// A job's number: whole and positive, and short enough to be one (CLI11 would read 2^64 as 2^63-1).
CLI::Validator job_number() {
  return CLI::Validator(
      [](const std::string& text) {
        const bool digits = !text.empty() && text.size() <= 18 &&
                            text.find_first_not_of("0123456789") == std::string::npos && text != "0" &&
                            text.front() != '0';
        return digits
                   ? std::string()
                   : "'" + text + "' is not a job number: a positive whole number, as `cudojo history` lists";
      },
      "");
}

}  // namespace

std::unique_ptr<ClientCommands> add_client_commands(CLI::App& app) {
  auto c = std::make_unique<ClientCommands>();
  const auto server_option = [](CLI::App* command, ServerChoice& where) {
    command->add_option("--server", where.server, "Which logged-in server (the name given to `login --as`)")
        ->capture_default_str();
  };
  c->login = app.add_subcommand(
      "login",
      "Log in to a class server (`cudojo serve`) from a machine without a GPU; its judge compiles and runs "
      "your "
      "kernels. The URL and token are kept in $XDG_CONFIG_HOME/cudojo/servers.json (~/.config/cudojo; mode "
      "0600):\n"
      "  cudojo login https://gpu.example.edu --invite k7qm-3xd9at --name 'Ada L'   join a class by its "
      "invite code\n"
      "  CUDOJO_TOKEN=... cudojo login https://gpu.example.edu                       a token from your "
      "instructor\n"
      "  cudojo login http://10.0.0.5:8080 --token ... --as lab                     a second server, named "
      "'lab'\n"
      "https_proxy, http_proxy and no_proxy (either case) are read as curl reads them; --cacert adds a "
      "certificate to the system's.");
  c->login->add_option("url", c->login_options.url, "The server's address, as the page's")->required();
  c->login->add_option(
      "--token", c->login_options.token,
      "Your token (or set CUDOJO_TOKEN, so it is not on the command line or in the shell's history)");
  c->login->add_option("--invite", c->login_options.invite, "A class's invite code: join it as --name");
  c->login->add_option("--name", c->login_options.name, "Your name in the class (with --invite)");
  c->login->add_option("--as", c->login_options.where.server, "The name to keep this server under")
      ->capture_default_str();
  c->login->add_option("--cacert", c->login_options.cacert,
                       "A PEM certificate to trust besides the system's (a school's own authority)");

  c->logout = app.add_subcommand(
      "logout", "Forget a server and its token:\n  cudojo logout\n  cudojo logout --server lab");
  server_option(c->logout, c->logout_options);

  c->submit = app.add_subcommand(
      "submit",
      "Send a kernel to the server's judge and follow it; prints what `cudojo check` prints, with its exit "
      "code "
      "(0 accepted, 1 a verdict against the kernel, 2 no judge's answer or a usage error, 3 the server "
      "refused, could not be reached or stopped answering, 130 Ctrl-C):\n"
      "  cudojo submit reduction/3 mine.cu              queued, 2 ahead ... compiling ... tests ... the "
      "report\n"
      "  cudojo submit reduction/3 mine.py --json       the job as the API gives it\n"
      "  cudojo submit atomics/1 mine.rs --no-wait      queue it and return; `cudojo status JOB` later\n"
      "Ctrl-C while the job waits in the queue withdraws it; once it runs, Ctrl-C only stops following.\n"
      "If the server stops answering while you wait (5 tries, a second apart), the job is kept there: "
      "`cudojo status JOB` follows it when the server is back.");
  c->submit->add_option("stage", c->submit_options.stage, "The stage's id or alias (`cudojo stages`)")
      ->required();
  c->submit->add_option("file", c->submit_options.file, "The kernel: .cu, .py or .rs")->required();
  c->submit->add_option("--lang", c->submit_options.lang,
                        "cuda, python or rust (default: from the extension)");
  c->submit->add_flag("--no-wait", c->submit_options.no_wait, "Print the job's number and return");
  c->submit->add_flag("--json", c->submit_options.follow.json, "Print the job's JSON when it is done");
  server_option(c->submit, c->submit_options.where);

  c->status = app.add_subcommand("status",
                                 "Follow one of your jobs until its verdict, or show it if done (exit "
                                 "codes as submit's):\n"
                                 "  cudojo status 42\n  cudojo status 42 --json");
  c->status->add_option("job", c->status_options.job, "The job's number")
      ->required()
      ->check(job_number())
      ->type_name("NUMBER");
  c->status->add_flag("--json", c->status_options.follow.json, "Print the job's JSON");
  server_option(c->status, c->status_options.where);

  c->history = app.add_subcommand(
      "history",
      "Your jobs on the server, newest first (number, stage, language, verdict, "
      "time ratio, when), a page at a time:\n  cudojo history\n  cudojo history reduction/3 "
      "--limit 50\n  cudojo history --before 120    (the page after the one ending at job 120)");
  c->history->add_option("stage", c->history_options.stage, "Only this stage's jobs");
  c->history->add_option("--limit", c->history_options.limit, "How many (1 to 100)")->capture_default_str();
  c->history->add_option("--before", c->history_options.before, "Only jobs older than this one (paging back)")
      ->check(job_number())
      ->type_name("JOB");
  c->history->add_flag("--json", c->history_options.json, "Print the API's page of history");
  server_option(c->history, c->history_options.where);

  c->pull = app.add_subcommand("pull",
                               "Fetch your latest source for a stage: the last job you sent, or your draft "
                               "on the server if you edited "
                               "it since (on the page, from another computer):\n"
                               "  cudojo pull reduction/3 -o mine.cu\n  cudojo pull reduction/3 | less");
  c->pull->add_option("stage", c->pull_options.stage, "The stage's id or alias")->required();
  c->pull->add_option("-o,--output", c->pull_options.output, "Write it here (default: standard output)");
  c->pull->add_flag("--force", c->pull_options.force, "Replace the file when it exists");
  c->pull->footer(
      "Exit codes: 0 written, 1 no submission or draft of yours for that stage on the server, 2 usage "
      "error, 3 the server refused, could not be reached or stopped answering.");
  server_option(c->pull, c->pull_options.where);
  return c;
}

namespace {

// The first Ctrl-C asks the command to stop (withdrawing a queued job); a second one, while it
// does, ends the process as Ctrl-C always does.
void on_sigint(int) {
  if (mark_interrupt()) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
}

}  // namespace

std::optional<int> run_client_command(ClientCommands& c) {
  std::ostream& out = std::cout;
  std::ostream& err = std::cerr;
  if (*c.login) return run_login(c.login_options, out, err);
  if (*c.logout) return run_logout(c.logout_options, out, err);
  if (*c.history) return run_history(c.history_options, out, err);
  if (*c.pull) return run_pull(c.pull_options, out, err);
  if (!*c.submit && !*c.status) return std::nullopt;
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  if (*c.submit) {
    c.submit_options.follow.colour = colour_wanted(1);
    return run_submit(c.submit_options, out, err);
  }
  c.status_options.follow.colour = colour_wanted(1);
  return run_status(c.status_options, out, err);
}

}  // namespace cudojo::cli

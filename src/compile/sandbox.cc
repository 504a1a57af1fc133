#include "compile/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/process_registry.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> bubblewrap_argv(const std::string& bwrap, const SandboxRun& run) {
  std::vector<std::string> argv = {
      bwrap,
      // New user, pid, network, ipc, uts and cgroup namespaces: nothing outside is visible or
      // reachable, and everything inside dies with the sandbox.
      "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534", "--die-with-parent",
      "--new-session", "--cap-drop", "ALL",
      // The system, read-only (Debian's merged /usr: /bin and /lib are links into it).
      "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
      "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin", "--ro-bind-try",
      "/etc/ld.so.cache", "/etc/ld.so.cache",
      // Debian reaches some libraries (libblas for numpy) through links in /etc/alternatives.
      "--ro-bind-try", "/etc/alternatives", "/etc/alternatives", "--proc", "/proc", "--dev", "/dev",
      "--tmpfs", "/tmp",
      // The job: the learner's file and the front end, and where answers are written.
      "--bind", run.job_folder, "/job", "--chdir", "/job", "--clearenv", "--setenv", "HOME", "/job",
      "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp"};
  for (const auto& mount : run.read_only) {
    argv.insert(argv.end(), {"--ro-bind", mount.host, mount.inside});
  }
  for (const auto& [name, value] : run.environment) argv.insert(argv.end(), {"--setenv", name, value});
  argv.emplace_back("--");
  argv.insert(argv.end(), run.command.begin(), run.command.end());
  return argv;
}

void set_limit(int resource, rlim_t value) {
  rlimit limit{value, value};
  setrlimit(resource, &limit);
}

// Reads what is there without blocking; keeps at most `cap` bytes.
bool drain(int fd, std::string& into, std::size_t cap) {
  char buffer[65536];
  const ssize_t got = read(fd, buffer, sizeof buffer);
  if (got <= 0) return got < 0 && (errno == EAGAIN || errno == EINTR);
  const std::size_t room = cap > into.size() ? cap - into.size() : 0;
  into.append(buffer, std::min<std::size_t>(room, static_cast<std::size_t>(got)));
  return true;
}

}  // namespace

std::string find_bubblewrap() {
  if (const char* configured = std::getenv("CUDOJO_BWRAP"); configured && *configured) {
    return std::filesystem::exists(configured) ? configured : "";
  }
  return std::filesystem::exists("/usr/bin/bwrap") ? "/usr/bin/bwrap" : "";
}

SandboxResult run_in_sandbox(const SandboxRun& run) {
  SandboxResult result;
  const std::string bwrap = find_bubblewrap();
  if (bwrap.empty()) {
    result.failure =
        "bubblewrap (bwrap) is not installed; cudojo compiles Python and Rust only inside it "
        "(apt install bubblewrap, or set CUDOJO_BWRAP)";
    return result;
  }
  const std::vector<std::string> arguments = bubblewrap_argv(bwrap, run);
  std::vector<char*> argv;
  for (const auto& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.failure = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  const auto started = Clock::now();
  const pid_t child = fork();
  if (child < 0) {
    result.failure = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (child == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    const int null_input = open("/dev/null", O_RDONLY);
    if (null_input >= 0) dup2(null_input, STDIN_FILENO);
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(run.time_limit).count() + 1;
    set_limit(RLIMIT_CPU, static_cast<rlim_t>(seconds));
    set_limit(RLIMIT_AS, run.memory_bytes);
    set_limit(RLIMIT_FSIZE, run.file_bytes);
    set_limit(RLIMIT_CORE, 0);
    set_limit(RLIMIT_NOFILE, 1024);
    // Nothing of the parent's beyond the three standard streams: a server's listening socket or a
    // learner's open connection must not reach the compiler.
    close_range(3, ~0U, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  register_process_group(child);
  close(out_pipe[1]);
  close(err_pipe[1]);
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);

  const auto deadline = started + run.time_limit;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (remaining <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(std::min<long long>(remaining, 200))) < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
      out_open = drain(out_pipe[0], result.out, run.max_output_bytes);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      err_open = drain(err_pipe[0], result.err, run.max_output_bytes);
  }
  if (result.timed_out) kill(-child, SIGKILL);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  unregister_process_group(child);
  result.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  result.started = true;
  if (WIFEXITED(status)) {
    result.exited = true;
    result.code = WEXITSTATUS(status);
    if (result.code == 127 && result.out.empty() && result.err.empty()) {
      result.started = false;
      result.failure = "bubblewrap could not be started";
    }
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    if (result.signal == SIGXCPU) result.failure = "it used up its CPU time";
  }
  if (result.timed_out) {
    result.failure = "it ran past its time limit and was stopped";
  } else if (result.exited && result.code != 0 && result.err.find("bwrap:") != std::string::npos &&
             result.out.empty()) {
    result.started = false;
    result.failure = "bubblewrap refused to start the sandbox: " + result.err.substr(0, 400);
  }
  return result;
}

}  // namespace cudojo

#include "compile/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

#include "common/process_registry.h"

namespace cudojo {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// util-linux's prlimit sets the process limit inside the sandbox (see sandbox.h for why inside).
constexpr const char* kPrlimit = "/usr/bin/prlimit";
// The host user a root caller's sandbox runs as: nobody, whom RLIMIT_NPROC holds (root it never does).
constexpr uid_t kSandboxUser = 65534;
constexpr gid_t kSandboxGroup = 65534;
// How often the parent counts the sandbox's processes and threads.
constexpr auto kCountInterval = std::chrono::milliseconds(100);
// What the child says on stderr when it could not set the sandbox up, so the parent tells that
// apart from anything the sandboxed program prints.
constexpr std::string_view kSetupFailed = "cudojo sandbox: ";

// A host folder or file bubblewrap binds into the sandbox, and the path it reads it from: the host
// path itself, or, for a root caller, its mount point in the staging folder (see Staging).
struct Binding {
  std::string host;
  std::string source;
  std::string inside;
  bool writable = false;
};

std::vector<std::string> bubblewrap_argv(const std::string& bwrap, const SandboxRun& run,
                                         const std::vector<Binding>& bindings) {
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
      "--tmpfs", "/tmp"};
  for (const auto& binding : bindings) {
    argv.insert(argv.end(), {binding.writable ? "--bind" : "--ro-bind", binding.source, binding.inside});
  }
  argv.insert(argv.end(), {"--chdir", "/job", "--clearenv", "--setenv", "HOME", "/job", "--setenv", "PATH",
                           "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", "--setenv", "TMPDIR", "/tmp",
                           // A thread pool sized to the host's cores (OpenBLAS's, started when numpy is
                           // imported) would meet the process limit on a large machine, and OpenBLAS raises
                           // SIGINT when it cannot start a thread.
                           "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "OMP_NUM_THREADS", "1"});
  for (const auto& [name, value] : run.environment) argv.insert(argv.end(), {"--setenv", name, value});
  argv.emplace_back("--");
  // The kernel's bound, twice the parent's: between two counts nothing grows past it, and a fork
  // bomb held there is well over max_processes when the parent next counts.
  const std::string processes = std::to_string(2 * run.max_processes);
  argv.insert(argv.end(), {kPrlimit, "--nproc=" + processes + ":" + processes, "--"});
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

// Adds the children of every thread of `pid` to `into`; returns how many threads `pid` has.
int threads_and_children(pid_t pid, std::vector<pid_t>& into) {
  int threads = 0;
  std::error_code error;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    ++threads;
    std::ifstream children(task.path() / "children");
    pid_t child = 0;
    while (children >> child) into.push_back(child);
  }
  return threads;
}

// The processes and threads below `top` (its own not counted), up to `stop_at`. Every process of
// the sandbox is below bubblewrap's: in a pid namespace an orphan is adopted by the namespace's
// first process, which is bubblewrap's own.
int count_tasks_below(pid_t top, int stop_at) {
  std::vector<pid_t> pending;
  threads_and_children(top, pending);
  int count = 0;
  while (!pending.empty() && count < stop_at) {
    const pid_t pid = pending.back();
    pending.pop_back();
    count += threads_and_children(pid, pending);
  }
  return count;
}

// Gives `folder` and everything in it to `user` (links themselves, never what they point to).
bool give_folder(const std::string& folder, uid_t user, gid_t group) {
  if (lchown(folder.c_str(), user, group) != 0) return false;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    lchown(it->path().c_str(), user, group);
  }
  return !error;
}

// A root caller's job folder belongs to the sandbox's user while it runs, and to the caller again
// afterwards (with whatever the sandbox wrote in it).
class LentFolder {
 public:
  explicit LentFolder(std::string folder) : folder_(std::move(folder)) {}
  ~LentFolder() { give_folder(folder_, geteuid(), getegid()); }
  LentFolder(const LentFolder&) = delete;
  LentFolder& operator=(const LentFolder&) = delete;

 private:
  std::string folder_;
};

// For a root caller: a folder of mount points, one per binding, that the child binds the host
// paths onto in a mount namespace of its own, because bubblewrap looks every path up as the user
// it runs as, and the user nobody cannot reach, say, /root/.cache. The mounts never reach the host's mount
// namespace, so this folder only ever holds empty mount points, removed one by one (never
// recursively).
class Staging {
 public:
  std::optional<std::string> make(std::vector<Binding>& bindings) {
    std::string pattern = (fs::temp_directory_path() / "cudojo-sandbox-XXXXXX").string();
    if (!mkdtemp(pattern.data())) return "cannot make a folder in " + fs::temp_directory_path().string();
    folder_ = pattern;
    chmod(folder_.c_str(), 0711);  // the sandbox's user passes through it and sees nothing listed
    for (std::size_t i = 0; i < bindings.size(); ++i) {
      struct stat host {};
      if (stat(bindings[i].host.c_str(), &host) != 0)
        return "cannot find " + bindings[i].host + ": " + std::strerror(errno);
      const std::string point = folder_ + "/" + std::to_string(i);
      const bool made = S_ISDIR(host.st_mode)
                            ? mkdir(point.c_str(), 0755) == 0
                            : close(open(point.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)) == 0;
      if (!made) return "cannot make " + point;
      points_.push_back(point);
      bindings[i].source = point;
    }
    return std::nullopt;
  }
  ~Staging() {
    for (const auto& point : points_) ::remove(point.c_str());
    if (!folder_.empty()) rmdir(folder_.c_str());
  }

 private:
  std::string folder_;
  std::vector<std::string> points_;
};

// In the child, after fork: only async-signal-safe calls from here to exec.
[[noreturn]] void setup_failed(const char* what) {
  [[maybe_unused]] const ssize_t prefix = write(STDERR_FILENO, kSetupFailed.data(), kSetupFailed.size());
  [[maybe_unused]] const ssize_t text = write(STDERR_FILENO, what, std::strlen(what));
  _exit(127);
}

void become_nobody(const std::vector<Binding>& bindings) {
  if (unshare(CLONE_NEWNS) != 0) setup_failed("cannot make a mount namespace for the sandbox's folders");
  // Nothing mounted below reaches the host's mount namespace.
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    setup_failed("cannot make the mount namespace private");
  for (const auto& binding : bindings) {
    if (mount(binding.host.c_str(), binding.source.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      setup_failed("cannot bind a folder for the sandbox");
  }
  if (setgroups(0, nullptr) != 0 || setresgid(kSandboxGroup, kSandboxGroup, kSandboxGroup) != 0 ||
      setresuid(kSandboxUser, kSandboxUser, kSandboxUser) != 0)
    setup_failed("cannot run the sandbox as nobody (65534)");
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
  if (!fs::exists(kPrlimit)) {
    result.failure =
        "prlimit (util-linux) is not installed at /usr/bin/prlimit; the sandbox sets its "
        "process limit with it";
    return result;
  }
  std::vector<Binding> bindings = {{run.job_folder, run.job_folder, "/job", true}};
  for (const auto& mount : run.read_only) bindings.push_back({mount.host, mount.host, mount.inside, false});

  const bool as_nobody = geteuid() == 0;
  Staging staging;
  std::optional<LentFolder> lent;
  if (as_nobody) {
    if (auto problem = staging.make(bindings)) {
      result.failure = "cannot prepare the sandbox's folders: " + *problem;
      return result;
    }
    if (!give_folder(run.job_folder, kSandboxUser, kSandboxGroup)) {
      result.failure = "cannot give the job folder " + run.job_folder + " to the sandbox's user (65534)";
      give_folder(run.job_folder, geteuid(), getegid());
      return result;
    }
    lent.emplace(run.job_folder);
  }

  const std::vector<std::string> arguments = bubblewrap_argv(bwrap, run, bindings);
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
    if (as_nobody) become_nobody(bindings);
    execv(argv[0], argv.data());
    _exit(127);
  }
  register_process_group(child);
  close(out_pipe[1]);
  close(err_pipe[1]);
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);

  // A sandbox found holding more than max_processes is stopped at once, instead of spinning on
  // every core until its deadline (a fork bomb whose forks fail does not end by itself).
  const auto deadline = started + run.time_limit;
  auto next_count = started + kCountInterval;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    if (now >= next_count) {
      next_count = now + kCountInterval;
      if (count_tasks_below(child, run.max_processes + 1) > run.max_processes) {
        result.process_limit_reached = true;
        break;
      }
    }
    const auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::min(deadline, next_count) - now).count();
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(std::max<long long>(wait_ms, 1))) < 0 && errno != EINTR) break;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
      out_open = drain(out_pipe[0], result.out, run.max_output_bytes);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      err_open = drain(err_pipe[0], result.err, run.max_output_bytes);
  }
  if (result.timed_out || result.process_limit_reached) kill(-child, SIGKILL);
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
    } else if (result.code == 127 && result.out.empty() && result.err.starts_with(kSetupFailed)) {
      result.started = false;
      result.failure = result.err;
    }
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    if (result.signal == SIGXCPU) result.failure = "it used up its CPU time";
  }
  if (result.timed_out) {
    result.failure = "it ran past its time limit and was stopped";
  } else if (result.process_limit_reached) {
    result.failure = "it held more than its limit of " + std::to_string(run.max_processes) +
                     " processes and threads at once and was stopped";
  } else if (result.exited && result.code != 0 && result.err.starts_with("bwrap:") && result.out.empty()) {
    result.started = false;
    result.failure = "bubblewrap refused to start the sandbox: " + result.err.substr(0, 400);
  }
  return result;
}

}  // namespace cudojo

#include "run/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <thread>

#include "common/process_registry.h"

extern char** environ;

namespace cudojo {

namespace {

void make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
}

void close_fd(int& fd) {
  if (fd >= 0) {
    close(fd);
    fd = -1;
  }
}

}  // namespace

std::string WorkerProcess::Exit::describe() const {
  if (exited) return fmt::format("exited with code {}", code);
  return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
}

WorkerProcess::WorkerProcess(const std::vector<std::string>& argv, std::size_t output_cap_bytes,
                             const Environment& extra)
    : output_cap_(output_cap_bytes) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry) {
    const std::string variable(*entry);
    const std::string name = variable.substr(0, variable.find('='));
    const bool overridden =
        std::any_of(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == name; });
    if (!overridden) environment.push_back(variable);
  }
  for (const auto& [name, value] : extra) environment.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);

  int job_pipe[2], message_pipe[2], output_pipe[2];
  make_pipe(job_pipe);
  make_pipe(message_pipe);
  make_pipe(output_pipe);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, job_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, output_pipe[1], 2);
  posix_spawn_file_actions_adddup2(&actions, message_pipe[1], 3);
  // The worker gets its four descriptors and nothing else of the parent (the server's sockets).
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attributes, &empty);

  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int spawned = posix_spawn(&pid_, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);

  close(job_pipe[0]);
  close(message_pipe[1]);
  close(output_pipe[1]);
  stdin_fd_ = job_pipe[1];
  message_fd_ = message_pipe[0];
  output_fd_ = output_pipe[0];
  if (spawned != 0) {
    close_fd(stdin_fd_);
    close_fd(message_fd_);
    close_fd(output_fd_);
    throw std::system_error(spawned, std::generic_category(), fmt::format("cannot start {}", argv[0]));
  }
  register_process_group(pid_);
  // A worker that dies before reading its job must not kill the parent with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) {
    kill();
    wait();
  }
  close_fd(stdin_fd_);
  close_fd(message_fd_);
  close_fd(output_fd_);
}

namespace {

bool write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size() && fd >= 0) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;  // the worker is gone; its exit status will say why
    }
    written += static_cast<std::size_t>(n);
  }
  return fd >= 0;
}

}  // namespace

void WorkerProcess::send_job(const std::string& job) {
  write_all(stdin_fd_, job);
  close_fd(stdin_fd_);
}

bool WorkerProcess::send_line(const std::string& line, Clock::time_point deadline) {
  if (stdin_fd_ < 0) return false;
  if (deadline == Clock::time_point::max()) return write_all(stdin_fd_, line + "\n");
  fcntl(stdin_fd_, F_SETFL, fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
  const std::string text = line + "\n";
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(stdin_fd_, text.data() + written, text.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    pollfd fd = {stdin_fd_, POLLOUT, 0};
    poll(&fd, 1,
         static_cast<int>(std::min<long long>(
             std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1, 100)));
  }
  return true;
}

void WorkerProcess::close_input() { close_fd(stdin_fd_); }

void WorkerProcess::let_finish_in_background() {
  if (reaped_ || pid_ <= 0) return;
  while (output_fd_ >= 0) {
    pollfd fd = {output_fd_, POLLIN, 0};
    if (poll(&fd, 1, 0) <= 0) break;
    const std::uint64_t before = output_bytes_;
    read_output_once();
    if (output_bytes_ == before) break;  // end of file or an error: nothing more to read
  }
  // A worker that has not ended within its grace period is killed (it said its last word).
  std::thread([pid = pid_] {
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    int status = 0;
    while (Clock::now() < give_up) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) {
        unregister_process_group(pid);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    unregister_process_group(pid);
  }).detach();
  reaped_ = true;
  exit_.exited = true;
  exit_.code = 0;
}

bool WorkerProcess::wait_until(Clock::time_point deadline) {
  while (running()) {
    if (Clock::now() >= deadline) {
      kill();
      wait();
      return false;
    }
    // Keep reading its output meanwhile, so a worker that prints cannot block on a full pipe.
    if (output_fd_ >= 0) {
      pollfd fd = {output_fd_, POLLIN, 0};
      if (poll(&fd, 1, 20) > 0) read_output_once();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  wait();
  return true;
}

bool WorkerProcess::running() {
  if (reaped_ || pid_ <= 0) return false;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == 0) return true;
  if (done == pid_) record_exit(status);
  return false;
}

void WorkerProcess::record_exit(int status) {
  reaped_ = true;
  unregister_process_group(pid_);
  if (WIFEXITED(status)) {
    exit_.exited = true;
    exit_.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_.signal = WTERMSIG(status);
  }
}

void WorkerProcess::read_output_once() {
  char buffer[8192];
  ssize_t n = read(output_fd_, buffer, sizeof buffer);
  if (n <= 0) {
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) close_fd(output_fd_);
    return;
  }
  output_bytes_ += static_cast<std::uint64_t>(n);
  if (output_.size() < output_cap_) {
    output_.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n), output_cap_ - output_.size()));
  }
}

WorkerProcess::Wait WorkerProcess::next_message(Clock::time_point deadline, std::string& line) {
  for (;;) {
    if (auto newline = message_buffer_.find('\n'); newline != std::string::npos) {
      line = message_buffer_.substr(0, newline);
      message_buffer_.erase(0, newline + 1);
      return Wait::kMessage;
    }
    if (message_fd_ < 0) return Wait::kClosed;
    const auto now = Clock::now();
    if (now >= deadline) return Wait::kDeadline;
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd fds[2] = {{message_fd_, POLLIN, 0}, {output_fd_, POLLIN, 0}};
    const int count = output_fd_ >= 0 ? 2 : 1;
    int ready = poll(fds, count, static_cast<int>(std::min<long long>(remaining + 1, 1000)));
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (count == 2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) read_output_once();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[65536];
      ssize_t n = read(message_fd_, buffer, sizeof buffer);
      if (n > 0) {
        message_buffer_.append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close_fd(message_fd_);
      }
    }
  }
}

void WorkerProcess::kill() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGKILL);
}

void WorkerProcess::drain_output(int timeout_ms) {
  const auto until = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (output_fd_ >= 0 && Clock::now() < until) {
    pollfd fd = {output_fd_, POLLIN, 0};
    if (poll(&fd, 1, 50) > 0) read_output_once();
  }
}

WorkerProcess::Exit WorkerProcess::wait() {
  if (reaped_) return exit_;
  drain_output(2000);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  record_exit(status);
  return exit_;
}

}  // namespace cudojo

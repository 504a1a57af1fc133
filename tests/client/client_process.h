// The client as a learner's shell runs it, for tests/client/: `cudojo login`, `submit`, `status` as
// their own processes (the real binary, its real SIGINT handler and exit code), with an environment
// the test states (XDG_CONFIG_HOME, the proxy variables), their stdout and stderr in files the test
// reads while they run. A process still running when its ClientProcess goes is killed and reaped.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../e2e/run_cli.h"

extern char** environ;

namespace cudojo::client_testing {

namespace fs = std::filesystem;

// Variables a test's client never inherits from the shell that runs the tests: each test names the
// ones it wants.
inline bool inherited_away(const std::string& name) {
  for (const char* dropped : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                              "ALL_PROXY", "no_proxy", "NO_PROXY", "CUDOJO_TOKEN", "XDG_CONFIG_HOME"})
    if (name == dropped) return true;
  return false;
}

class ClientProcess {
 public:
  using Environment = std::map<std::string, std::string>;

  // Starts `cudojo ARGS` with the test's environment plus `env`; its output goes to files named
  // after `name` in `folder`.
  ClientProcess(const std::vector<std::string>& args, const Environment& env, const fs::path& folder,
                const std::string& name)
      : out_path_(folder / (name + ".out")), err_path_(folder / (name + ".err")) {
    fs::create_directories(folder);
    std::vector<std::string> words = {testing::cudojo_binary()};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<std::string> variables;
    for (char** entry = environ; *entry; ++entry) {
      const std::string text = *entry;
      if (!inherited_away(text.substr(0, text.find('=')))) variables.push_back(text);
    }
    for (const auto& [key, value] : env) variables.push_back(key + "=" + value);
    // Everything exec needs is made before fork: the child of a threaded test runs no allocator.
    std::vector<char*> argv, envp;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    for (auto& variable : variables) envp.push_back(variable.data());
    envp.push_back(nullptr);
    const int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out, 1);
      dup2(err, 2);
      signal(SIGINT, SIG_DFL);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(out);
    close(err);
  }
  ~ClientProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string out() const { return read(out_path_); }
  std::string err() const { return read(err_path_); }

  // Waits until stderr says `text`; false when the process ended or `within` passed first.
  bool wait_for_err(const std::string& text, std::chrono::milliseconds within) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < end) {
      if (err().find(text) != std::string::npos) return true;
      if (pid_ <= 0 || waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = -1;
        return err().find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Its exit code as a shell gives it (128 + N for signal N); nullopt when it still runs after
  // `within` (it is then left running for the destructor).
  std::optional<int> wait(std::chrono::milliseconds within) {
    const auto end = std::chrono::steady_clock::now() + within;
    while (pid_ > 0) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      if (std::chrono::steady_clock::now() >= end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (WIFEXITED(status_)) return WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
    return std::nullopt;
  }

 private:
  static std::string read(const fs::path& file) {
    std::ifstream in(file);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path out_path_, err_path_;
  pid_t pid_ = -1;
  int status_ = 0;
};

// The job's number in "sent FILE as job N to URL"; 0 when it is not there.
inline std::int64_t sent_job_id(const std::string& err) {
  const auto at = err.find(" as job ");
  return at == std::string::npos ? 0 : std::stoll(err.substr(at + 8));
}

}  // namespace cudojo::client_testing

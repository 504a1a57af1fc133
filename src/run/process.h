// Theory of operation.
//
// Two processes per check. The parent (cudojo check, or a server thread) never touches CUDA for a
// submission; it spawns one worker (`cudojo worker`) per submission, in its own process group,
// with three pipes:
//   worker stdin   <- the job, one JSON line; then, for the check worker, the parent's answer when
//                     it asks for the GPU to itself
//   worker fd 3    -> protocol messages, one JSON object per line (phases, then the result)
//   worker 1 and 2 -> captured output (device printf lands here), kept up to a cap, the rest drained
// The parent alone holds the clock: each message can move the deadline (the worker announces each
// phase and how many launches it holds), and when a deadline passes the parent kills the whole
// process group with SIGKILL. A fault in learner code can end the worker, never the parent.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cudojo {

// The last `bytes` of a worker's text (its output, a tool's log) behind "...", for a message that
// quotes what it said last.
inline std::string last_part(const std::string& text, std::size_t bytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  using Environment = std::vector<std::pair<std::string, std::string>>;
  // Spawns argv[0] with argv and this process's environment plus `extra` (which wins);
  // throws std::system_error when the process cannot start.
  WorkerProcess(const std::vector<std::string>& argv, std::size_t output_cap_bytes,
                const Environment& extra = {});
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Writes the job to the worker's stdin and closes it.
  void send_job(const std::string& job);
  // Writes one line (a newline is added) and keeps stdin open for the next; false when the worker
  // has gone, or has not taken the whole line by `deadline` (a worker that stops reading cannot
  // hold the parent).
  bool send_line(const std::string& line, Clock::time_point deadline = Clock::time_point::max());
  void close_input();
  // After the worker's last message: keeps the output it has written so far and leaves the
  // process to end on its own (a CUDA context takes a tenth of a second to tear down, which no
  // one needs to wait for); a background thread reaps it.
  void let_finish_in_background();
  // Whether the process is still running (a pre-started worker may have died while it waited).
  bool running();

  enum class Wait { kMessage, kClosed, kDeadline };
  // Waits for the next protocol line until the deadline, draining captured output meanwhile.
  // kClosed: the worker closed its message pipe (it exited, or is about to).
  Wait next_message(Clock::time_point deadline, std::string& line);

  // Kills the process group (idempotent).
  void kill();

  struct Exit {
    bool exited = false;  // exited normally
    int code = 0;         // exit code when exited
    int signal = 0;       // terminating signal otherwise
    std::string describe() const;
  };
  // Reaps the worker, draining the rest of its output (bounded by a short grace period).
  Exit wait();
  // The same, but a worker still running at `deadline` is killed first; returns whether it
  // ended by itself.
  bool wait_until(Clock::time_point deadline);

  // Forgets the output captured so far: a warm worker's next job starts with none.
  void reset_output() {
    output_.clear();
    output_bytes_ = 0;
  }
  const std::string& output() const { return output_; }
  bool output_truncated() const { return output_bytes_ > output_.size(); }
  std::uint64_t output_bytes() const { return output_bytes_; }

 private:
  void drain_output(int timeout_ms);
  void record_exit(int status);  // from waitpid's status
  void read_output_once();

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int message_fd_ = -1;
  int output_fd_ = -1;
  std::string message_buffer_;
  std::string output_;
  std::uint64_t output_bytes_ = 0;
  std::size_t output_cap_;
  bool reaped_ = false;
  Exit exit_;
};

}  // namespace cudojo

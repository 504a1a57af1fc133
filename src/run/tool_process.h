// One tool worker's process as the parent sees it (run/tools.cc and ncu): the file its tool logs
// into, the command that starts it under the tool, and following one job to its end, or, for a
// warm tool worker, to the mark that ends the job's part of the log and to its settling.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "run/gpu_lease.h"
#include "run/process.h"
#include "run/protocol.h"
#include "run/tools.h"

namespace cudojo {

// A file a tool writes its log into, removed when it goes out of scope.
class ToolLog {
 public:
  explicit ToolLog(const char* prefix) : path_(std::string("/tmp/") + prefix + "-XXXXXX") {
    const int fd = mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file for a tool's log");
    close(fd);
  }
  ~ToolLog() { std::remove(path_.c_str()); }
  ToolLog(const ToolLog&) = delete;
  ToolLog& operator=(const ToolLog&) = delete;
  const std::string& path() const { return path_; }
  std::string read() const { return read_from(0); }
  // From byte `offset` to the end as it is now (a kept tool's log grows job by job).
  std::string read_from(std::size_t offset) const {
    std::ifstream in(path_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::size_t size() const {
    std::error_code error;
    const auto bytes = std::filesystem::file_size(path_, error);
    return error ? 0 : static_cast<std::size_t>(bytes);
  }

 private:
  std::string path_;
};

// How a tool worker's run ended, as the parent saw it.
struct ToolRun {
  std::map<std::string, double> timings;  // the worker's own steps, from its result
  bool timed_out = false;                 // stopped at the tool budget; its log is incomplete
  // Kept alive: where the job's part of the log ends (the mark's line), and whether the worker
  // settled and waits for another job.
  std::optional<std::size_t> log_end;
  bool reusable = false;
  // Kept alive, its job completed, yet the mark never reached the log: this tool does not report
  // the worker's failed call, so its workers cannot be kept (a fault or a deadline says nothing
  // about that: the worker never made the call).
  bool mark_missing = false;
};

// How to follow one tool worker's job.
struct ToolFollow {
  double budget_ms = 0;
  GpuLease* lease = nullptr;
  // Kept alive: wait for the mark in `log` (after `log_offset`) and the worker's "idle".
  bool keep_alive = false;
  const ToolLog* log = nullptr;
  std::size_t log_offset = 0;
  std::string mark;  // run/tool_marks.h; empty: the log as it stands at the result is the job's
  double mark_wait_ms = 0;
  double settle_ms = 0;
};

// Waits (within `wait_ms`) until the tool has written the worker's `mark` into its log.
std::optional<std::size_t> wait_for_log_mark(const ToolLog& log, std::size_t offset, const std::string& mark,
                                             double wait_ms);

// Reads a tool worker's messages until its result, its end, the budget or `cancelled`, then waits
// (within the same budget) for the tool to exit, since it writes its log as it exits; a warm one
// is left running once its mark is in the log and it has settled (ToolRun::reusable).
ToolRun follow_tool_worker(WorkerProcess& worker, const std::string& job_line, const ToolFollow& follow,
                           const std::atomic<bool>* cancelled = nullptr);

// A tool's worker runs as the tool's child, where the judge cannot give it a parent-death signal;
// it is told the judge's pid instead, and ends when the judge does (run/worker.cc), so a killed
// server leaves no tool running on a kernel that never returns.
WorkerProcess::Environment tool_environment(const ToolSettings& settings);

// `prefix` (the tool and its options), then `cudojo worker MODE`.
std::vector<std::string> worker_command(const ToolSettings& settings, std::vector<std::string> prefix,
                                        WorkerMode mode);

}  // namespace cudojo

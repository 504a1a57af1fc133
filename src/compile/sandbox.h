// Runs a host-side compiler on learner code inside an OS sandbox (bubblewrap): no network, no
// other processes to see, a read-only /usr, an empty writable /tmp, the job's own folder at /job,
// only the host folders a compiler needs (read-only), no environment but what is passed, an
// unprivileged user, rlimits on memory, CPU time, file size and open files, and a limit on the
// processes and threads it may hold at once. The parent holds a wall-clock deadline, counts the
// sandbox's processes every 100 ms, and kills the whole sandbox at the deadline or when it finds
// more than max_processes.
// Used for Python (Numba runs the learner's module) and Rust (rustc expands the learner's macros).
//
// Between two counts the kernel bounds the sandbox at twice max_processes with RLIMIT_NPROC. The
// kernel counts that per user and user namespace (Linux 5.14 and later), so it is set inside the
// sandbox (prlimit, run after bubblewrap has made the sandbox's user namespace) and counts that
// sandbox's processes alone; set before bubblewrap, it would count every process of the calling
// user. Root is never held to RLIMIT_NPROC, so a root caller's sandbox runs as nobody (65534) on
// the host as well: the job folder is lent to nobody for the run, and since bubblewrap looks each
// folder up as the user it runs as, the child first binds every folder onto a mount point that
// user can reach, in a mount namespace of its own (so a root-only cache such as /root/.cache works).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/limits.h"

namespace cudojo {

struct SandboxMount {
  std::string host;
  std::string inside;
};

struct SandboxRun {
  std::vector<std::string> command;  // as seen inside the sandbox
  std::string job_folder;            // bound read-write at /job, the working directory
  std::vector<SandboxMount> read_only;
  std::vector<std::pair<std::string, std::string>> environment;
  std::chrono::milliseconds time_limit{30000};
  std::uint64_t memory_bytes = 6ull << 30;  // address space: LLVM reserves generously
  std::uint64_t file_bytes = 512ull << 20;
  std::size_t max_output_bytes = 4u << 20;                    // stdout and stderr each; the rest is dropped
  int max_processes = kDefaultLimits.frontend_max_processes;  // processes and threads at once
};

struct SandboxResult {
  bool started = false;  // false: bubblewrap could not be run (see failure)
  bool timed_out = false;
  bool process_limit_reached = false;  // it held more than max_processes at once and was stopped
  bool exited = false;
  int code = -1;
  int signal = 0;
  std::string out;
  std::string err;
  double ms = 0;
  std::string failure;  // why it did not start or was stopped, in words
};

SandboxResult run_in_sandbox(const SandboxRun& run);

// bubblewrap: $CUDOJO_BWRAP, else /usr/bin/bwrap; empty when neither exists.
std::string find_bubblewrap();

}  // namespace cudojo

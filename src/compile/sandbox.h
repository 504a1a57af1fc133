// Runs a host-side compiler on learner code inside an OS sandbox (bubblewrap): no network, no
// other processes to see, a read-only /usr, an empty writable /tmp, the job's own folder at /job,
// only the host folders a compiler needs (read-only), no environment but what is passed, an
// unprivileged user, and rlimits on memory, CPU time, file size and open files. The parent holds a
// wall-clock deadline too and kills the whole sandbox when it passes.
// Used for Python (Numba runs the learner's module) and Rust (rustc expands the learner's macros).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
  std::size_t max_output_bytes = 4u << 20;  // stdout and stderr each; the rest is dropped
};

struct SandboxResult {
  bool started = false;  // false: bubblewrap could not be run (see failure)
  bool timed_out = false;
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

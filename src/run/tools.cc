#include "run/tools.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "check/sanitizer.h"
#include "common/environment.h"
#include "common/json_text.h"
#include "run/session.h"
#include "run/tool_marks.h"
#include "run/tool_process.h"

namespace cudojo {

namespace {
using Clock = std::chrono::steady_clock;

}  // namespace

std::string find_cuda_tool(const std::string& name, const char* env_variable) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv(env_variable); env && *env) candidates.push_back(env);
  if (const char* path = std::getenv("PATH")) {
    std::stringstream folders(path);
    std::string folder;
    while (std::getline(folders, folder, ':')) {
      if (!folder.empty()) candidates.push_back(folder + "/" + name);
    }
  }
  candidates.push_back("/usr/local/cuda/bin/" + name);
  for (const auto& candidate : candidates) {
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
  }
  return {};
}

struct SanitizerPass::Tool {
  std::string name;
  ToolLog log{"cudojo-sanitizer"};
  std::unique_ptr<WorkerProcess> worker;
  std::thread follower;
  std::atomic<bool> cancelled{false};
  ToolRun run;
  Clock::time_point job_sent;
  double seconds = 0;
  double budget_ms = 0;        // the budget this job was given (a warm tool's is shorter)
  std::size_t log_offset = 0;  // where this job's part of the log begins
  bool given_job = false;
  bool ran_last_job = false;  // given_job, as it was when the last job ended
  bool said_ready = false;    // its "ready" was read (a kept worker says it once, before its first job)
  int printed = 0;            // reports its tool has printed so far, marks included (see print_limit())
  std::string mark;           // what ends a job's part of its log (run/tool_marks.h); empty: none
  // A kept worker's log size when its last job was read: whatever the tool writes after that
  // belongs to no job, so a log that grew lets the worker go before its next job.
  std::optional<std::size_t> log_size_after_job;
  bool log_grew() const { return log_size_after_job && log.size() != *log_size_after_job; }
};

namespace {

// Tools whose log showed no mark once (a tool that did not report the mark on this GPU): their
// workers are not kept alive again in this process, since their logs could not be cut.
std::mutex unmarked_mutex;
std::set<std::string> unmarked_tools;

bool marks_work(const std::string& tool) {
  std::lock_guard lock(unmarked_mutex);
  return !unmarked_tools.count(tool);
}

void marks_missing(const std::string& tool) {
  std::lock_guard lock(unmarked_mutex);
  unmarked_tools.insert(tool);
}

}  // namespace

SanitizerPass::SanitizerPass(const ToolSettings& settings) : settings_(settings) {
  if (settings_.sanitizer_executable.empty()) {
    note_ = fmt::format(
        "compute-sanitizer was not found (set {} or put it on PATH); races and divergent barriers were not "
        "looked for",
        env::kComputeSanitizer);
    return;
  }
  refill();
}

// compute-sanitizer's --print-limit counts over the whole process. A kept tool gets room for many
// jobs, and is let go while every job still has sanitizer_print_limit reports left before it.
int SanitizerPass::print_limit() const {
  return settings_.keep_alive ? settings_.limits.sanitizer_print_limit * kKeptToolJobsOfReports
                              : settings_.limits.sanitizer_print_limit;
}

std::unique_ptr<SanitizerPass::Tool> SanitizerPass::start_tool(const char* name) {
  auto tool = std::make_unique<Tool>();
  tool->name = name;
  tool->mark = new_tool_mark(name);
  WorkerProcess::Environment environment = tool_environment(settings_);
  environment.emplace_back(env::kToolName, name);
  environment.emplace_back(env::kToolMark, tool->mark);
  tool->worker = std::make_unique<WorkerProcess>(
      worker_command(settings_,
                     {settings_.sanitizer_executable, "--tool", name, "--log-file", tool->log.path(),
                      "--print-limit", std::to_string(print_limit())},
                     WorkerMode::kSanitize),
      settings_.limits.max_output_bytes, environment);
  return tool;
}

void SanitizerPass::refill() {
  if (settings_.sanitizer_executable.empty()) return;
  std::vector<std::unique_ptr<Tool>> kept;
  for (const char* name : kSanitizerTools) {
    auto found = std::find_if(tools_.begin(), tools_.end(), [&](const auto& tool) {
      return tool && tool->name == name && tool->worker && tool->worker->running() && !tool->log_grew();
    });
    kept.push_back(found != tools_.end() ? std::move(*found) : start_tool(name));
  }
  tools_ = std::move(kept);
  started_ = false;
}

SanitizerPass::~SanitizerPass() { cancel(); }

bool SanitizerPass::ready() {
  if (!settings_.sanitizer_executable.empty() && tools_.size() != std::size(kSanitizerTools)) return false;
  for (auto& tool : tools_) {
    if (!tool->worker->running() || tool->log_grew()) return false;
  }
  return true;
}

// Reads a worker's messages until it says "ready" (or ends, or the deadline passes).
bool wait_for_ready(WorkerProcess& worker, Clock::time_point deadline) {
  std::string line;
  while (worker.next_message(deadline, line) == WorkerProcess::Wait::kMessage) {
    const auto message = nlohmann::json::parse(line, nullptr, false);
    if (!message.is_discarded() && message.is_object() && message.value("event", "") == "ready") return true;
  }
  return false;
}

void SanitizerPass::wait_until_started(Clock::time_point deadline) {
  if (started_) return;
  for (auto& tool : tools_) {
    if (!tool->said_ready) tool->said_ready = wait_for_ready(*tool->worker, deadline);
  }
}

void SanitizerPass::start(const Job& sanitize_job, GpuLease* lease, const std::set<std::string>& skipped) {
  if (started_ || tools_.empty()) return;
  started_ = true;
  skipped_ = skipped;
  for (auto& tool : tools_) {
    if (skipped.count(tool->name)) {
      if (!settings_.keep_alive) tool->worker->kill();
      continue;
    }
    Job job = sanitize_job;
    job.keep_alive = sanitize_job.keep_alive && settings_.keep_alive && marks_work(tool->name);
    auto line = std::make_shared<const std::string>(json_text(nlohmann::json(job)));
    ToolFollow follow;
    // A warm tool has started already: its budget covers the load and the one launch, and bounds
    // how long a kernel that spins only under the tool holds the GPU from everyone's timing.
    follow.budget_ms = tool->said_ready && settings_.keep_alive ? settings_.limits.warm_tool_budget_ms
                                                                : settings_.limits.tool_budget_ms;
    tool->budget_ms = follow.budget_ms;
    follow.lease = lease;
    follow.keep_alive = job.keep_alive;
    follow.log = &tool->log;
    follow.log_offset = tool->log_offset = tool->log.size();
    follow.mark = tool->mark;
    follow.mark_wait_ms = settings_.limits.tool_log_mark_wait_ms;
    follow.settle_ms = settings_.limits.worker_settle_ms;
    tool->job_sent = Clock::now();
    tool->given_job = true;
    tool->run = ToolRun{};
    // The job (with its cubins) is written from the tool's own thread: a tool that stops reading
    // must not hold up the check worker's session.
    tool->follower = std::thread([line, follow, raw = tool.get()] {
      try {
        raw->run = follow_tool_worker(*raw->worker, *line, follow, &raw->cancelled);
      } catch (const std::exception&) {
        // A worker that said something unreadable: stopped, and its log read as it stands.
        raw->worker->kill();
        raw->worker->wait();
        raw->run = ToolRun{};
      }
      raw->seconds = std::chrono::duration<double>(Clock::now() - raw->job_sent).count();
    });
  }
}

SanitizerOutcome SanitizerPass::finish(const std::string& file_name) {
  SanitizerOutcome outcome;
  outcome.summary.requested = true;
  if (tools_.empty()) {
    outcome.summary.note = note_;
    return outcome;
  }
  if (!started_) {
    outcome.summary.note = "the sanitizers were not started";
    return outcome;
  }
  for (auto& tool : tools_) {
    if (skipped_.count(tool->name)) {
      outcome.summary.skipped.push_back(tool->name);
      continue;
    }
    if (tool->follower.joinable()) tool->follower.join();
    outcome.timings_ms["sanitizer." + tool->name] = tool->seconds * 1000.0;
    for (const auto& [step, ms] : tool->run.timings)
      outcome.timings_ms["sanitizer." + tool->name + "." + step] = ms;
    const std::string log = without_tool_mark_reports(
        tool->run.log_end
            ? tool->log.read_from(tool->log_offset).substr(0, *tool->run.log_end - tool->log_offset)
            : tool->log.read_from(tool->log_offset),
        tool->mark);
    // A mark missing after a part with reports may only have been cut off by the print limit (the
    // tool stops printing once it is reached): that worker goes, and its tool stays kept.
    if (tool->run.mark_missing && !tool_log_has_report(log)) marks_missing(tool->name);
    // CUDOJO_KEEP_SANITIZER_LOGS=DIR keeps each raw log (how tests/fixtures/sanitizer/ was captured).
    if (const char* keep = std::getenv(env::kKeepSanitizerLogs); keep && *keep) {
      std::ofstream(std::string(keep) + "/" + tool->name + "-" + file_name + ".txt") << log;
    }
    // A tool stopped by its budget is said to be stopped even when it had printed nothing yet (on a
    // loaded machine it may not have written its banner): "no report" would hide why.
    const std::string stopped_note =
        tool->run.timed_out
            ? fmt::format("{} was stopped after its budget of {:.1f} s; its report is incomplete", tool->name,
                          tool->budget_ms / 1000)
            : std::string();
    // A kept tool's part of the log may be empty: its mark proves the tool was watching.
    if (!tool->run.log_end && log.find("COMPUTE-SANITIZER") == std::string::npos &&
        log.find("=========") == std::string::npos) {
      outcome.summary.note = tool->run.timed_out
                                 ? stopped_note
                                 : fmt::format("{} produced no report: {}", tool->name, last_part(log, 300));
      outcome.summary.tools.push_back({tool->name, 0, tool->seconds});
      continue;
    }
    const SanitizerErrors errors = parse_sanitizer_log(tool->name, log, file_name);
    // What it reported before it was stopped still stands; silence after that proves nothing.
    if (tool->run.timed_out) outcome.summary.note = stopped_note;
    outcome.summary.tools.push_back({tool->name, errors.errors, tool->seconds});
    tool->printed += errors.errors + (tool->mark.empty() ? 0 : 1);  // and the mark
    if (tool->printed + settings_.limits.sanitizer_print_limit + 1 > print_limit())
      tool->run.reusable = false;
    outcome.findings.insert(outcome.findings.end(), errors.findings.begin(), errors.findings.end());
  }
  outcome.summary.ran = true;
  keep_reusable_tools();
  return outcome;
}

void SanitizerPass::keep_reusable_tools() {
  std::erase_if(tools_, [](const auto& tool) { return tool->given_job && !tool->run.reusable; });
  for (auto& tool : tools_) {
    if (tool->given_job) tool->log_size_after_job = tool->log.size();
    tool->ran_last_job = tool->given_job;
    tool->given_job = false;
    tool->said_ready = true;
  }
  started_ = false;
}

void SanitizerPass::cancel() {
  for (auto& tool : tools_) {
    // A started tool belongs to its thread, which sees the flag within 50 ms and stops it; one
    // never started is stopped here, unless it is kept for the next job.
    if (tool->follower.joinable()) {
      tool->cancelled = true;
    } else if (!settings_.keep_alive) {
      tool->worker->kill();
    }
  }
  for (auto& tool : tools_) {
    if (tool->follower.joinable()) tool->follower.join();
  }
  if (!settings_.keep_alive) {
    tools_.clear();
    return;
  }
  for (auto& tool : tools_) {
    if (tool->cancelled) tool->run.reusable = false;
  }
  keep_reusable_tools();
}

void SanitizerPass::discard() {
  cancel();
  tools_.clear();
}

void SanitizerPass::discard_those_that_ran_the_job() {
  std::vector<std::unique_ptr<Tool>> kept;
  for (auto& tool : tools_) {
    // A tool still given its job (neither finished nor cancelled) has the kernel too.
    if (tool->ran_last_job || tool->given_job) {
      if (tool->follower.joinable()) {
        tool->cancelled = true;
        tool->follower.join();
      }
      continue;  // dropped, and its worker ended with it
    }
    kept.push_back(std::move(tool));
  }
  tools_ = std::move(kept);
  started_ = false;
}

NcuMetrics measure_with_ncu(const ToolSettings& settings, Job launch_job, const std::string& cupti_error,
                            GpuLease* lease, const std::function<void()>& free_counters) {
  const auto started = Clock::now();
  NcuMetrics metrics;
  const std::string ncu = find_cuda_tool("ncu", env::kNcu);
  if (ncu.empty()) {
    metrics.note = fmt::format("metrics unavailable: {}; ncu was not found", cupti_error);
    return metrics;
  }
  // Profiling has the GPU alone, from the tool's start to its exit: the worker under it asks for
  // nothing itself.
  launch_job.gpu_turns = false;
  GpuLease::Hold alone;
  if (lease) alone = lease->alone();
  if (free_counters) free_counters();
  ToolLog csv("cudojo-ncu");
  const std::string names = ncu_metric_list(launch_job.profile_sm_throughput);
  {
    WorkerProcess worker(
        worker_command(
            settings, {ncu, "--clock-control", "none", "--metrics", names, "--csv", "--log-file", csv.path()},
            WorkerMode::kLaunchForNcu),
        settings.limits.max_output_bytes, tool_environment(settings));
    ToolFollow follow;
    follow.budget_ms = settings.limits.tool_budget_ms;
    if (follow_tool_worker(worker, json_text(nlohmann::json(launch_job)), follow).timed_out) {
      metrics.note = fmt::format("metrics unavailable: {}; ncu was stopped after its budget", cupti_error);
      metrics.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
      return metrics;
    }
  }
  const ProfileResult parsed = parse_ncu_csv(csv.read());
  if (parsed.ok && parsed.kernels.size() >= 2) {
    metrics.reference_kernel = parsed.kernels[0];
    metrics.kernel = parsed.kernels[1];
    metrics.note =
        fmt::format("{}; measured with ncu{}", cupti_error,
                    launch_job.profile_sm_throughput ? "" : std::string("; ") + kSmThroughputNotMeasured);
  } else {
    metrics.note = fmt::format("metrics unavailable: {}; ncu: {}", cupti_error,
                               parsed.ok ? "fewer than two kernels profiled" : parsed.error);
  }
  metrics.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return metrics;
}

}  // namespace cudojo

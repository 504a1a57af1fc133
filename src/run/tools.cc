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
#include <sstream>

#include "check/sanitizer.h"
#include "common/environment.h"
#include "common/json_text.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

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
  std::string read() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
};

// How a tool worker's run ended, as the parent saw it.
struct ToolRun {
  std::map<std::string, double> timings;  // the worker's own steps, from its result
  bool timed_out = false;                 // stopped at the tool budget; its log is incomplete
};

// Reads a tool worker's messages until its result, its end, the tool budget or `cancelled`, then
// waits (within the same budget) for the tool to exit, since it writes its log as it exits.
// `cancelled` is only read here, so the thread that sets it never touches the process.
ToolRun follow_tool_worker(WorkerProcess& worker, const std::string& job_line, double budget_ms,
                           const std::atomic<bool>* cancelled = nullptr) {
  ToolRun run;
  const auto deadline = Clock::now() + std::chrono::microseconds(static_cast<long long>(budget_ms * 1000));
  if (!worker.send_line(job_line, deadline) && worker.running()) {
    run.timed_out = true;
    worker.kill();
    worker.wait();
    return run;
  }
  std::string line;
  for (;;) {
    const auto slice = std::min(deadline, Clock::now() + std::chrono::milliseconds(50));
    const auto wait = worker.next_message(slice, line);
    if (wait == WorkerProcess::Wait::kMessage) {
      const auto message = nlohmann::json::parse(line, nullptr, false);
      if (!message.is_discarded() && message.is_object() && message.value("event", "") == "result") {
        const auto& steps =
            message.value("report", nlohmann::json::object()).value("timings_ms", nlohmann::json::object());
        for (const auto& [step, ms] : steps.items()) {
          if (ms.is_number()) run.timings[step] = ms.get<double>();
        }
        break;
      }
      continue;
    }
    if (wait == WorkerProcess::Wait::kClosed) break;
    if (cancelled && cancelled->load()) {
      worker.kill();
      break;
    }
    if (Clock::now() >= deadline) {
      run.timed_out = true;
      worker.kill();
      break;
    }
  }
  worker.close_input();
  if (!worker.wait_until(deadline)) run.timed_out = true;
  return run;
}

// A tool's worker runs as the tool's child, where the judge cannot give it a parent-death signal;
// it is told the judge's pid instead, and ends when the judge does (run/worker.cc), so a killed
// server leaves no tool running on a kernel that never returns.
WorkerProcess::Environment tool_environment(const ToolSettings& settings) {
  WorkerProcess::Environment environment = settings.environment;
  environment.emplace_back(env::kJudgePid, std::to_string(getpid()));
  return environment;
}

std::vector<std::string> worker_command(const ToolSettings& settings, std::vector<std::string> prefix,
                                        WorkerMode mode) {
  prefix.push_back(settings.worker_executable);
  prefix.push_back("worker");
  prefix.push_back(std::string(to_string(mode)));
  return prefix;
}

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
};

SanitizerPass::SanitizerPass(const ToolSettings& settings) : settings_(settings) {
  if (settings_.sanitizer_executable.empty()) {
    note_ = fmt::format(
        "compute-sanitizer was not found (set {} or put it on PATH); races and divergent barriers were not "
        "looked for",
        env::kComputeSanitizer);
    return;
  }
  for (const char* name : kSanitizerTools) {
    auto tool = std::make_unique<Tool>();
    tool->name = name;
    tool->worker = std::make_unique<WorkerProcess>(
        worker_command(settings_,
                       {settings_.sanitizer_executable, "--tool", name, "--log-file", tool->log.path(),
                        "--print-limit", std::to_string(settings_.limits.sanitizer_print_limit)},
                       WorkerMode::kSanitize),
        settings_.limits.max_output_bytes, tool_environment(settings_));
    tools_.push_back(std::move(tool));
  }
}

SanitizerPass::~SanitizerPass() { cancel(); }

bool SanitizerPass::ready() {
  for (auto& tool : tools_) {
    if (!tool->worker->running()) return false;
  }
  return true;
}

// Reads a worker's messages until it says "ready" (or ends, or the deadline passes).
void wait_for_ready(WorkerProcess& worker, Clock::time_point deadline) {
  std::string line;
  while (worker.next_message(deadline, line) == WorkerProcess::Wait::kMessage) {
    const auto message = nlohmann::json::parse(line, nullptr, false);
    if (!message.is_discarded() && message.is_object() && message.value("event", "") == "ready") return;
  }
}

void SanitizerPass::wait_until_started(Clock::time_point deadline) {
  if (started_) return;
  for (auto& tool : tools_) wait_for_ready(*tool->worker, deadline);
}

void SanitizerPass::start(const Job& sanitize_job) {
  if (started_ || tools_.empty()) return;
  started_ = true;
  auto line = std::make_shared<const std::string>(json_text(nlohmann::json(sanitize_job)));
  for (auto& tool : tools_) {
    tool->job_sent = Clock::now();
    // The job (with its cubins) is written from the tool's own thread: a tool that stops reading
    // must not hold up the check worker's session.
    tool->follower = std::thread([this, line, raw = tool.get()] {
      raw->run = follow_tool_worker(*raw->worker, *line, settings_.limits.tool_budget_ms, &raw->cancelled);
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
    if (tool->follower.joinable()) tool->follower.join();
    outcome.timings_ms["sanitizer." + tool->name] = tool->seconds * 1000.0;
    for (const auto& [step, ms] : tool->run.timings)
      outcome.timings_ms["sanitizer." + tool->name + "." + step] = ms;
    const std::string log = tool->log.read();
    // CUDOJO_KEEP_SANITIZER_LOGS=DIR keeps each raw log (how tests/fixtures/sanitizer/ was captured).
    if (const char* keep = std::getenv(env::kKeepSanitizerLogs); keep && *keep) {
      std::ofstream(std::string(keep) + "/" + tool->name + "-" + file_name + ".txt") << log;
    }
    if (log.find("COMPUTE-SANITIZER") == std::string::npos && log.find("=========") == std::string::npos) {
      outcome.summary.note = fmt::format("{} produced no report: {}", tool->name, last_part(log, 300));
      outcome.summary.tools.push_back({tool->name, 0, tool->seconds});
      continue;
    }
    const SanitizerErrors errors = parse_sanitizer_log(tool->name, log, file_name);
    if (tool->run.timed_out) {
      // What it reported before it was stopped still stands; silence after that proves nothing.
      outcome.summary.note =
          fmt::format("{} was stopped after its budget of {:.0f} s; its report is incomplete", tool->name,
                      settings_.limits.tool_budget_ms / 1000);
    }
    outcome.summary.tools.push_back({tool->name, errors.errors, tool->seconds});
    outcome.findings.insert(outcome.findings.end(), errors.findings.begin(), errors.findings.end());
  }
  outcome.summary.ran = true;
  tools_.clear();
  return outcome;
}

void SanitizerPass::cancel() {
  for (auto& tool : tools_) {
    // A started tool belongs to its thread, which sees the flag within 50 ms and stops it; one
    // never started is stopped here.
    if (tool->follower.joinable()) {
      tool->cancelled = true;
    } else {
      tool->worker->kill();
    }
  }
  for (auto& tool : tools_) {
    if (tool->follower.joinable()) tool->follower.join();
  }
  tools_.clear();
}

NcuMetrics measure_with_ncu(const ToolSettings& settings, const Job& launch_job,
                            const std::string& cupti_error) {
  const auto started = Clock::now();
  NcuMetrics metrics;
  const std::string ncu = find_cuda_tool("ncu", env::kNcu);
  if (ncu.empty()) {
    metrics.note = fmt::format("metrics unavailable: {}; ncu was not found", cupti_error);
    return metrics;
  }
  ToolLog csv("cudojo-ncu");
  std::string names;
  for (const auto& name : profiler_metric_names()) names += (names.empty() ? "" : ",") + name;
  {
    WorkerProcess worker(
        worker_command(
            settings, {ncu, "--clock-control", "none", "--metrics", names, "--csv", "--log-file", csv.path()},
            WorkerMode::kLaunchForNcu),
        settings.limits.max_output_bytes, tool_environment(settings));
    if (follow_tool_worker(worker, json_text(nlohmann::json(launch_job)), settings.limits.tool_budget_ms)
            .timed_out) {
      metrics.note = fmt::format("metrics unavailable: {}; ncu was stopped after its budget", cupti_error);
      metrics.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
      return metrics;
    }
  }
  const ProfileResult parsed = parse_ncu_csv(csv.read());
  if (parsed.ok && parsed.kernels.size() >= 2) {
    metrics.reference_kernel = parsed.kernels[0];
    metrics.kernel = parsed.kernels[1];
    metrics.note = fmt::format("{}; measured with ncu", cupti_error);
  } else {
    metrics.note = fmt::format("metrics unavailable: {}; ncu: {}", cupti_error,
                               parsed.ok ? "fewer than two kernels profiled" : parsed.error);
  }
  metrics.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return metrics;
}

}  // namespace cudojo

#include "run/tool_process.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "common/environment.h"
#include "run/session.h"
#include "run/tool_marks.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// Waits (within `wait_ms`) until the tool has written the worker's `mark` into its log.
std::optional<std::size_t> wait_for_log_mark(const ToolLog& log, std::size_t offset, const std::string& mark,
                                             double wait_ms) {
  const auto give_up = Clock::now() + std::chrono::microseconds(static_cast<long long>(wait_ms * 1000));
  for (;;) {
    if (auto at = find_tool_log_mark(log.read_from(offset), mark)) return offset + *at;
    if (Clock::now() >= give_up) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Reads a tool worker's messages until its result, its end, the tool budget or `cancelled`, then
// waits (within the same budget) for the tool to exit, since it writes its log as it exits.
// `cancelled` is only read here, so the thread that sets it never touches the process.
ToolRun follow_tool_worker(WorkerProcess& worker, const std::string& job_line, const ToolFollow& follow,
                           const std::atomic<bool>* cancelled) {
  ToolRun run;
  // The worker holds the GPU only as its gpu_turn messages ask (gpu/gpu_turns.h); waiting for
  // another job's turn does not count against the tool's budget.
  WorkerGpuHold gpu(follow.lease);
  double lease_ms = 0;
  worker.reset_output();
  auto deadline = Clock::now() + std::chrono::microseconds(static_cast<long long>(follow.budget_ms * 1000));
  bool got_result = false;
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
      if (!message.is_discarded() && message.is_object() && message.value("event", "") == kGpuTurnEvent) {
        const double waited = gpu.answer(message, worker, deadline);
        lease_ms += waited;
        deadline += std::chrono::microseconds(static_cast<long long>(waited * 1000));
        continue;
      }
      if (!message.is_discarded() && message.is_object() && message.value("event", "") == "result") {
        const auto report = message.find("report");
        if (report != message.end() && report->is_object()) {
          const auto steps = report->find("timings_ms");
          if (steps != report->end() && steps->is_object()) {
            for (const auto& [step, ms] : steps->items()) {
              if (ms.is_number()) run.timings[step] = ms.get<double>();
            }
          }
        }
        const auto said = message.find("outcome");
        got_result = said != message.end() && said->is_string() && *said == outcome::kCompleted;
        run.timings["parent.lease"] = lease_ms;
        // Shared through the mark, the settling (the worker drains the GPU and makes its session
        // again) and the exit.
        const double waited = gpu.at_least_shared();
        lease_ms += waited;
        deadline += std::chrono::microseconds(static_cast<long long>(waited * 1000));
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
  if (got_result && follow.keep_alive && follow.log) {
    const auto result_at = Clock::now();
    if (follow.mark.empty()) {
      // No mark: the log as it stands is the job's; a report in it lets the worker go, and the
      // whole log is read once the tool has exited.
      const std::string part = follow.log->read_from(follow.log_offset);
      if (!tool_log_has_report(part)) run.log_end = follow.log_offset + part.size();
    } else {
      run.log_end = wait_for_log_mark(*follow.log, follow.log_offset, follow.mark, follow.mark_wait_ms);
      run.mark_missing = !run.log_end;
    }
    run.timings["parent.mark"] = std::chrono::duration<double, std::milli>(Clock::now() - result_at).count();
    if (run.log_end) {
      const auto marked = Clock::now();
      const auto settle = std::min(
          deadline, marked + std::chrono::microseconds(static_cast<long long>(follow.settle_ms * 1000)));
      await_idle(worker, settle, run.reusable);
      run.timings["parent.settle"] = std::chrono::duration<double, std::milli>(Clock::now() - marked).count();
      // Without a mark, anything the tool wrote after the cut (the worker has drained the GPU while
      // settling) is this job's: the cut is dropped, the worker goes, and the log is read whole.
      if (follow.mark.empty() && follow.log->size() != *run.log_end) {
        run.log_end.reset();
        run.reusable = false;
      }
      if (run.reusable) return run;
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

}  // namespace cudojo

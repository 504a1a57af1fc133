#include "run/session.h"

#include <algorithm>
#include <chrono>

#include "run/protocol.h"

namespace cudojo {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after_ms(double ms) {
  return Clock::now() + std::chrono::microseconds(static_cast<long long>(ms * 1000));
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

double WorkerGpuHold::answer(const nlohmann::json& message, WorkerProcess& worker,
                             Clock::time_point reply_by) {
  const auto asked_for = message.find("want");
  const std::string want =
      asked_for != message.end() && asked_for->is_string() ? asked_for->get<std::string>() : "";
  if (want != "shared" && want != "alone") {
    hold_.release();  // "none", or anything else: the worker says nothing of its is on the GPU
    return 0;
  }
  double waited = 0;
  if (lease_ && !(want == "shared" ? hold_.held() : hold_.alone())) {
    hold_.release();  // never wait for the lease while holding it (gpu_lease.h)
    const auto asked = Clock::now();
    hold_ = want == "alone" ? lease_->alone() : lease_->share();
    waited = ms_since(asked);
  }
  worker.send_line(nlohmann::json{{"event", kGpuGrantEvent}, {"measure", true}}.dump(),
                   reply_by + std::chrono::microseconds(static_cast<long long>(waited * 1000)));
  return waited;
}

double WorkerGpuHold::take_alone() {
  hold_.release();
  if (!lease_) return 0;
  const auto asked = Clock::now();
  hold_ = lease_->alone();
  return ms_since(asked);
}

double WorkerGpuHold::at_least_shared() {
  if (!lease_) return 0;
  if (hold_.alone()) {
    hold_.share_again();
    return 0;
  }
  if (hold_.held()) return 0;
  const auto asked = Clock::now();
  hold_ = lease_->share();
  return ms_since(asked);
}

std::string await_idle(WorkerProcess& worker, std::chrono::steady_clock::time_point deadline,
                       bool& reusable) {
  reusable = false;
  std::string line;
  for (;;) {
    switch (worker.next_message(deadline, line)) {
      case WorkerProcess::Wait::kDeadline:
        worker.kill();
        return "it did not settle in time after its job (a kernel still running?)";
      case WorkerProcess::Wait::kClosed:
        return "it ended after its job";
      case WorkerProcess::Wait::kMessage: {
        const auto message = nlohmann::json::parse(line, nullptr, false);
        if (message.is_discarded() || !message.is_object()) {
          worker.kill();
          return "it sent something that is not a protocol message";
        }
        if (message.value("event", "") != kIdleEvent) continue;
        const auto& why = message.value("why", nlohmann::json(""));
        reusable = message.value("reusable", false) == true;
        return why.is_string() ? why.get<std::string>() : std::string();
      }
    }
  }
}

double phase_budget_ms(const JudgeLimits& limits, int launches, double reference_ms) {
  const double per_launch = std::max(reference_ms, 0.001);
  return std::min(limits.phase_cap_ms,
                  limits.phase_floor_ms + launches * per_launch * limits.phase_launch_factor);
}

SessionResult run_worker_session(WorkerProcess& worker, const std::string& job_line,
                                 const JudgeLimits& limits, const SessionHooks& hooks) {
  SessionResult session;
  auto progress = [&](std::string_view phase) {
    if (hooks.on_progress) hooks.on_progress(phase);
  };
  session.budget_ms = limits.startup_budget_ms;
  session.reference_ms = hooks.reference_ms;
  // Nothing is held until the worker asks: it compiles first, and holds the GPU only while its work
  // is there.
  WorkerGpuHold gpu(hooks.lease);
  auto deadline = after_ms(session.budget_ms);
  auto count_wait = [&](double waited) {
    session.timings_ms["waited_for_gpu"] += waited;
    // The wait for another job's turn is not this kernel's.
    deadline += std::chrono::microseconds(static_cast<long long>(waited * 1000));
  };
  worker.reset_output();
  worker.send_line(job_line, deadline);

  for (bool reading = true; reading;) {
    std::string line;
    switch (worker.next_message(deadline, line)) {
      case WorkerProcess::Wait::kDeadline:
        worker.kill();
        session.ending = SessionResult::Ending::kDeadline;
        reading = false;
        break;
      case WorkerProcess::Wait::kClosed:
        session.ending = SessionResult::Ending::kClosed;
        reading = false;
        break;
      case WorkerProcess::Wait::kMessage: {
        nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
        if (message.is_discarded() || !message.is_object() || !message.contains("event") ||
            !message.at("event").is_string()) {
          worker.kill();
          session.ending = SessionResult::Ending::kMalformed;
          reading = false;
          break;
        }
        const std::string event = message.at("event").get<std::string>();
        if (event == "compiled") {
          session.compiled = true;
          progress("compiled");
          if (hooks.on_compiled) hooks.on_compiled(message);
        } else if (event == "reference_time") {
          const auto& ms = message.value("ms", nlohmann::json(-1.0));
          session.reference_ms = ms.is_number() ? ms.get<double>() : -1.0;
        } else if (event == "phase") {
          session.phase = message.value("name", "?");
          progress(session.phase);
          const auto& launches = message.value("launches", nlohmann::json(1));
          session.budget_ms = phase_budget_ms(limits, launches.is_number_integer() ? launches.get<int>() : 1,
                                              session.reference_ms);
          deadline = after_ms(session.budget_ms);
        } else if (event == "await_gpu") {
          progress("waiting for the tools");
          gpu.release();  // the tools finish meanwhile, and may need to share the GPU to do so
          const auto held = Clock::now();
          const bool measure = hooks.on_await_gpu ? hooks.on_await_gpu() : true;
          session.timings_ms["held_for_tools"] = ms_since(held);
          if (measure) session.timings_ms["waited_for_gpu"] += gpu.take_alone();
          worker.send_line(nlohmann::json{{"event", kGpuGrantEvent}, {"measure", measure}}.dump(),
                           after_ms(limits.phase_cap_ms));
          session.phase = measure ? "timing" : "finishing";
          progress(session.phase);
          // Timing and profiling announce no phase of their own: they run the judge's fixed
          // procedure, so the budget is the largest a phase may have.
          session.budget_ms = limits.phase_cap_ms;
          deadline = after_ms(session.budget_ms);
        } else if (event == kAwaitProfileEvent) {
          progress("profile");
          if (hooks.on_await_profile) hooks.on_await_profile(session.reference_ms, message);
          worker.send_line(nlohmann::json{{"event", kGpuGrantEvent}, {"measure", true}}.dump(),
                           after_ms(limits.phase_cap_ms));
          deadline = after_ms(session.budget_ms);  // the profile's time was not this worker's
        } else if (event == kGpuTurnEvent) {
          count_wait(gpu.answer(message, worker, deadline));
        } else if (event == "result") {
          session.result = std::move(message);
          session.ending = SessionResult::Ending::kResult;
          reading = false;
        }
      }
    }
  }
  if (session.ending == SessionResult::Ending::kResult && hooks.keep_alive) {
    // The worker settles the GPU (shared: it synchronizes and makes its session again).
    session.timings_ms["waited_for_gpu"] += gpu.at_least_shared();
    session.not_reusable_why = await_idle(worker, after_ms(limits.worker_settle_ms), session.reusable);
  }
  session.output.text = worker.output();
  session.output.truncated = worker.output_truncated();
  session.output.bytes = worker.output_bytes();
  if (session.reusable) return session;
  // A worker killed at a deadline may still have kernels on the GPU until it is reaped: the hold
  // goes with it, not before; one that ends the ordinary way tears its context down under a shared
  // hold.
  if (session.ending == SessionResult::Ending::kResult) gpu.at_least_shared();
  const auto exiting = Clock::now();
  worker.close_input();
  if (session.ending == SessionResult::Ending::kResult) {
    worker.let_finish_in_background();
  }
  session.exit = worker.wait();
  gpu.release();
  session.timings_ms["worker_exit"] = ms_since(exiting);
  session.output.text = worker.output();
  session.output.truncated = worker.output_truncated();
  session.output.bytes = worker.output_bytes();
  return session;
}

}  // namespace cudojo

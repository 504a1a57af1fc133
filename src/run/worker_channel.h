// A worker's side of the protocol (run/protocol.h): its messages on fd 3, its requests for the GPU,
// and the clock of its steps. Used by the worker's threads (CUDA's start-up says "ready" from its
// own), so every message is written whole under one lock.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "contract/driver.h"
#include "gpu/gpu_turns.h"
#include "report/report.h"

namespace cudojo {

void send(const nlohmann::json& message);
// The result message; remembers its outcome for last_outcome().
void send_result(const char* outcome, const Report& report);
// The outcome of the last result sent by this process ("" before any).
std::string last_outcome();
void forget_last_outcome();

// Blocks until the parent gives the GPU to this worker alone; false when it says not to measure
// (a tool already found the kernel wrong) or has gone.
bool await_gpu();

// Asks the parent to profile the kernel just timed in the GPU's profiling process, and waits until
// it has (Job::profile_elsewhere): this worker keeps the GPU alone and has nothing on it meanwhile.
// The time ratio it measured tells the parent whether the gate will read SM throughput.
void await_profile(std::optional<double> time_ratio);

// The worker's turns on the GPU when the parent judges other jobs on it (gpu/gpu_turns.h): shared
// and alone ask and wait for the answer; release tells and does not wait.
gpu_turns::Channel gpu_turns_from_parent();

class PipeAnnouncer : public PhaseAnnouncer {
 public:
  void reference_time(double ms) override { send({{"event", "reference_time"}, {"ms", ms}}); }
  void phase(std::string_view name, int launches) override {
    send({{"event", "phase"}, {"name", name}, {"launches", launches}});
  }
};

// Adds the time since `since` to the report's timings under `name`, and restarts the clock.
class StepClock {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StepClock(Report& report) : report_(report) {}
  void step(const std::string& name) {
    const auto now = Clock::now();
    report_.timings_ms[name] += std::chrono::duration<double, std::milli>(now - since_).count();
    since_ = now;
  }
  void restart() { since_ = Clock::now(); }

 private:
  Report& report_;
  Clock::time_point since_ = Clock::now();
};

}  // namespace cudojo

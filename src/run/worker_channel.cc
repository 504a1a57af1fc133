#include "run/worker_channel.h"

#include <unistd.h>

#include <iostream>
#include <mutex>

#include "common/json_text.h"
#include "run/protocol.h"

namespace cudojo {

namespace {

constexpr int kMessageFd = 3;
std::mutex send_mutex;
std::string sent_outcome;  // under send_mutex

// One line from the parent on stdin, parsed; discarded when it is not JSON or the parent has gone.
nlohmann::json read_parent_line() {
  std::string line;
  if (!std::getline(std::cin, line)) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(line, nullptr, false);
}

}  // namespace

void send(const nlohmann::json& message) {
  const std::string line = json_text(message) + "\n";
  std::lock_guard lock(send_mutex);
  std::size_t written = 0;
  while (written < line.size()) {
    ssize_t n = write(kMessageFd, line.data() + written, line.size() - written);
    if (n <= 0) return;  // the parent has gone; nothing left to tell
    written += static_cast<std::size_t>(n);
  }
}

void send_result(const char* outcome, const Report& report) {
  // The result ends the job's turns on the GPU: the parent answers no more requests after it. The
  // worker holds a turn first, which the parent keeps while the worker lets go of the job's buffers
  // and settles or exits.
  gpu_turns::hold_and_close();
  {
    std::lock_guard lock(send_mutex);
    sent_outcome = outcome;
  }
  send({{"event", "result"}, {"outcome", outcome}, {"report", report}});
}

std::string last_outcome() {
  std::lock_guard lock(send_mutex);
  return sent_outcome;
}

void forget_last_outcome() {
  std::lock_guard lock(send_mutex);
  sent_outcome.clear();
}

bool await_gpu() {
  send({{"event", "await_gpu"}});
  const auto grant = read_parent_line();
  return !grant.is_discarded() && grant.is_object() && grant.value("event", "") == kGpuGrantEvent &&
         grant.value("measure", false);
}

void await_profile(std::optional<double> time_ratio) {
  send({{"event", kAwaitProfileEvent},
        {"time_ratio", time_ratio ? nlohmann::json(*time_ratio) : nlohmann::json(nullptr)}});
  read_parent_line();  // any answer, or none (the parent gone): the profile is the parent's
}

gpu_turns::Channel gpu_turns_from_parent() {
  // Any answer, or none (the parent gone), lets the work go on: what matters is that the parent
  // answers only once it holds the GPU for this worker.
  auto ask = [](const char* want) {
    send({{"event", kGpuTurnEvent}, {"want", want}});
    read_parent_line();
  };
  gpu_turns::Channel channel;
  channel.share = [ask] { ask("shared"); };
  channel.alone = [ask] { ask("alone"); };
  channel.release = [] { send({{"event", kGpuTurnEvent}, {"want", "none"}}); };
  return channel;
}

}  // namespace cudojo

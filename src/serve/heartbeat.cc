#include "serve/heartbeat.h"

#include <fmt/format.h>

#include <chrono>

namespace cudojo {

Heartbeat::Heartbeat(Store& store, Settings settings) : store_(store), settings_(std::move(settings)) {}

Heartbeat::~Heartbeat() { stop(); }

void Heartbeat::start() {
  beat();
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stop_requested_.wait_for(lock, std::chrono::milliseconds(settings_.interval_ms),
                                     [this] { return stopping_; })) {
      lock.unlock();
      beat();
      lock.lock();
    }
  });
}

void Heartbeat::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Heartbeat::beat() {
  try {
    store_.register_node(settings_.node);
    if (settings_.running_claims) store_.renew_leases(settings_.running_claims(), settings_.lease_seconds);
    if (const int moved = store_.requeue_expired(); moved > 0) {
      fmt::print(stderr, "cudojo serve: {} job(s) whose judge stopped answering went back to the queue\n",
                 moved);
    }
    if (store_failing_)
      fmt::print(stderr, "cudojo serve: the store at {} answers again\n", store_.location());
    store_failing_ = false;
  } catch (const std::exception& error) {
    if (!store_failing_) fmt::print(stderr, "cudojo serve: heartbeat failed: {}\n", error.what());
    store_failing_ = true;
  }
}

}  // namespace cudojo

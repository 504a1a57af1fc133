// A node's pulse in the store, on its own thread: every heartbeat it refreshes its entry in the
// nodes table (GPU model, workers, whether it serves HTTP), renews the leases of the jobs it runs,
// and returns to the queue any job whose lease ran out, whichever node held it. Every node runs
// one, web nodes included, so jobs of a dead GPU host come back while any node is alive.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "serve/store.h"

namespace cudojo {

class Heartbeat {
 public:
  struct Settings {
    NodeInfo node;
    // The claims of the jobs this node is judging now: only their leases are renewed.
    std::function<std::vector<JobClaim>()> running_claims;
    double lease_seconds = ServeLimits{}.job_lease_seconds;
    int interval_ms = ServeLimits{}.heartbeat_ms;
  };

  Heartbeat(Store& store, Settings settings);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // Beats once now (registering the node), then every interval until stop().
  void start();
  void stop();

 private:
  void beat();

  Store& store_;
  Settings settings_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  bool store_failing_ = false;  // said once per outage
};

}  // namespace cudojo

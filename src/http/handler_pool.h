// The threads that run routes which call the store: a fixed number of threads and a bounded line of
// waiting tasks, so a burst of requests waits here, counted, rather than each taking a thread.
// Tasks are taken in turn by client: each client (an address group) has a line of its own, and the
// threads serve the lines round robin, so two thousand requests from one client delay another
// client's request by at most one of theirs, not by all of them.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cudojo::http {

class HandlerPool {
 public:
  HandlerPool(int threads, int max_waiting);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Queues `task` in `client`'s line; false (and `task` is not run) when every thread is busy and
  // max_waiting tasks already wait, or the pool has stopped.
  bool submit(const std::string& client, std::function<void()> task);
  // Runs no more tasks (waiting ones are dropped unrun), lets running ones finish, joins.
  void stop();
  std::int64_t waiting() const;

 private:
  void run();
  const std::size_t max_in_flight_;  // threads + max_waiting
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::unordered_map<std::string, std::deque<std::function<void()>>> lines_;  // by client
  std::deque<std::string> turns_;  // the clients with a task waiting, each once, in serving order
  std::size_t waiting_ = 0;
  std::size_t in_flight_ = 0;  // waiting and running
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cudojo::http

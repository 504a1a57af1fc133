#include "http/handler_pool.h"

#include <algorithm>

namespace cudojo::http {

HandlerPool::HandlerPool(int threads, int max_waiting)
    : max_in_flight_(static_cast<std::size_t>(std::max(1, threads) + std::max(1, max_waiting))) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { run(); });
}

HandlerPool::~HandlerPool() { stop(); }

bool HandlerPool::submit(const std::string& client, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    // Counted with the running ones: a task handed over an instant before an idle thread woke for
    // the last one is not refused for it.
    if (stopping_ || in_flight_ >= max_in_flight_) return false;
    ++in_flight_;
    ++waiting_;
    auto& line = lines_[client];
    if (line.empty()) turns_.push_back(client);
    line.push_back(std::move(task));
  }
  ready_.notify_one();
  return true;
}

void HandlerPool::stop() {
  std::unordered_map<std::string, std::deque<std::function<void()>>> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(lines_);
    turns_.clear();
    waiting_ = 0;
  }
  ready_.notify_all();
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // Destroyed here, outside the lock: a task may own a connection whose destructor takes other locks.
  dropped.clear();
}

std::int64_t HandlerPool::waiting() const {
  std::lock_guard lock(mutex_);
  return static_cast<std::int64_t>(waiting_);
}

void HandlerPool::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !turns_.empty(); });
      if (stopping_) return;
      const std::string client = std::move(turns_.front());
      turns_.pop_front();
      auto line = lines_.find(client);
      task = std::move(line->second.front());
      line->second.pop_front();
      --waiting_;
      // Back of the queue for its next task; a client with none left is forgotten.
      if (line->second.empty()) {
        lines_.erase(line);
      } else {
        turns_.push_back(client);
      }
    }
    task();
    std::lock_guard lock(mutex_);
    --in_flight_;
  }
}

}  // namespace cudojo::http

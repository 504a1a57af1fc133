#include "http/handler_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cudojo::http {
namespace {

using namespace std::chrono_literals;

// Holds the pool's one thread until released, so the test decides what waits.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  void wait() {
    std::unique_lock lock(mutex);
    opened.wait(lock, [this] { return open; });
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    opened.notify_all();
  }
};

TEST(HandlerPool, ClientsAreServedInTurnNotInArrivalOrder) {
  HandlerPool pool(1, 1000);
  Gate gate;
  std::mutex mutex;
  std::vector<std::string> order;
  ASSERT_TRUE(pool.submit("gate", [&] { gate.wait(); }));
  std::this_thread::sleep_for(20ms);  // the one thread now holds the gate's task
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(pool.submit("198.51.100.1", [&] {
      std::lock_guard lock(mutex);
      order.push_back("flood");
    }));
  }
  ASSERT_TRUE(pool.submit("198.51.100.2", [&] {
    std::lock_guard lock(mutex);
    order.push_back("other");
  }));
  EXPECT_EQ(pool.waiting(), 101);
  gate.release();
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(mutex);
      if (order.size() == 101) break;
    }
    std::this_thread::sleep_for(2ms);
  }
  pool.stop();
  const auto other = std::find(order.begin(), order.end(), "other");
  ASSERT_NE(other, order.end());
  EXPECT_LE(other - order.begin(), 1) << "the other client waited behind the flood";
  EXPECT_EQ(order.size(), 101u);
}

TEST(HandlerPool, ThreadsPlusWaitingIsTheMostItHolds) {
  HandlerPool pool(2, 3);
  Gate gate;
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += pool.submit("client", [&] { gate.wait(); });
  EXPECT_EQ(accepted, 5);
  gate.release();
  pool.stop();
  EXPECT_FALSE(pool.submit("client", [] {}));
}

}  // namespace
}  // namespace cudojo::http

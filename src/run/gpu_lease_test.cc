#include "run/gpu_lease.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace cudojo {
namespace {

using namespace std::chrono_literals;

TEST(GpuLease, SharersRunTogether) {
  GpuLease lease;
  auto first = lease.share();
  auto second = lease.share();
  EXPECT_EQ(lease.state().sharers, 2);
  first.release();
  EXPECT_EQ(lease.state().sharers, 1);
}

TEST(GpuLease, AloneWaitsForEverySharer) {
  GpuLease lease;
  auto sharer = lease.share();
  std::atomic<bool> got{false};
  std::thread timer([&] {
    auto hold = lease.alone();
    got = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(got.load()) << "timed while a sharer still used the GPU";
  EXPECT_EQ(lease.state().waiting_alone, 1);
  sharer.release();
  timer.join();
  EXPECT_TRUE(got.load());
  EXPECT_FALSE(lease.state().alone);
}

TEST(GpuLease, NoNewSharerStartsWhileOneWaitsToBeAlone) {
  GpuLease lease;
  auto sharer = lease.share();
  std::atomic<int> order{0};
  int alone_at = 0, late_sharer_at = 0;
  std::thread timer([&] {
    auto hold = lease.alone();
    alone_at = ++order;
  });
  while (lease.state().waiting_alone == 0) std::this_thread::sleep_for(1ms);
  std::thread late([&] {
    auto hold = lease.share();
    late_sharer_at = ++order;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(order.load(), 0);
  sharer.release();
  timer.join();
  late.join();
  EXPECT_EQ(alone_at, 1) << "a sharer that came later started first";
  EXPECT_EQ(late_sharer_at, 2);
}

TEST(GpuLease, OneAloneAtATime) {
  GpuLease lease;
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        auto hold = lease.alone();
        const int now = ++inside;
        most = std::max(most.load(), now);
        --inside;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(most.load(), 1);
}

TEST(GpuLease, SharingAgainLetsOthersShareButNotBeAlone) {
  GpuLease lease;
  auto mine = lease.alone();
  mine.share_again();
  EXPECT_FALSE(lease.state().alone);
  EXPECT_EQ(lease.state().sharers, 1);
  auto other = lease.share();
  std::atomic<bool> got{false};
  std::thread timer([&] {
    auto hold = lease.alone();
    got = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(got.load());
  mine.release();
  other.release();
  timer.join();
  EXPECT_TRUE(got.load());
}

TEST(GpuLease, MovedHoldReleasesOnce) {
  GpuLease lease;
  GpuLease::Hold outer;
  {
    auto inner = lease.share();
    outer = std::move(inner);
  }
  EXPECT_EQ(lease.state().sharers, 1);
  outer.release();
  outer.release();
  EXPECT_EQ(lease.state().sharers, 0);
}

}  // namespace
}  // namespace cudojo

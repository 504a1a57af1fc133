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

TEST(GpuLease, TheProfilersHolderIsAloneBeforeASlotThatAskedFirst) {
  GpuLease lease;
  auto profiler = lease.profiler_if_idle();
  ASSERT_TRUE(profiler.held());
  auto sharer = lease.share(true);
  std::atomic<int> order{0};
  int timer_at = 0, profiler_at = 0;
  std::thread timer([&] {
    auto hold = lease.alone();
    timer_at = ++order;
  });
  while (lease.state().waiting_alone == 0) std::this_thread::sleep_for(1ms);
  std::thread profiled([&] {
    auto hold = lease.alone(true);
    profiler_at = ++order;
    hold.release();
    profiler.release();
  });
  std::this_thread::sleep_for(30ms);
  sharer.release();
  timer.join();
  profiled.join();
  EXPECT_EQ(profiler_at, 1) << "a slot was alone while another held the GPU's profiler";
  EXPECT_EQ(timer_at, 2);
}

TEST(GpuLease, NobodyElseIsAloneWhileTheProfilerIsHeld) {
  GpuLease lease;
  auto profiler = lease.profiler_if_idle();
  std::atomic<bool> got{false};
  std::thread timer([&] {
    auto hold = lease.alone();
    got = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(got.load()) << "timed beside another process's enabled profiler";
  profiler.release();
  timer.join();
  EXPECT_TRUE(got.load());
}

TEST(GpuLease, WhileTheProfilerIsHeldASlotWaitingToBeAloneHoldsNoSharerBack) {
  // The holder's tests and tools must share the GPU before it asks to be alone: were they held
  // back by a slot that cannot be alone before the holder, neither would ever go on.
  GpuLease lease;
  auto profiler = lease.profiler_if_idle();
  std::thread timer([&] { auto hold = lease.alone(); });
  while (lease.state().waiting_alone == 0) std::this_thread::sleep_for(1ms);
  std::atomic<bool> shared{false};
  std::thread tools([&] {
    auto hold = lease.share();
    shared = true;
  });
  const auto give_up = std::chrono::steady_clock::now() + 2s;
  while (!shared && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(shared.load()) << "a sharer waited behind a slot that waits for the profiler";
  tools.join();
  profiler.release();
  timer.join();
}

TEST(GpuLease, OnceTheProfilersHolderWaitsToBeAloneNewSharersWait) {
  GpuLease lease;
  auto profiler = lease.profiler_if_idle();
  auto sharer = lease.share();
  std::thread profiled([&] { auto hold = lease.alone(true); });
  while (!lease.state().profiler_waiting_alone) std::this_thread::sleep_for(1ms);
  std::atomic<bool> late{false};
  std::thread other([&] {
    auto hold = lease.share();
    late = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(late.load()) << "a new sharer started while the profiler's holder waited to be alone";
  sharer.release();
  profiled.join();
  other.join();
  EXPECT_TRUE(late.load());
}

TEST(GpuLease, TheProfilerIsGivenOnlyWhenNothingUsesTheGpuAndToOneAtATime) {
  GpuLease lease;
  {
    auto sharer = lease.share();
    EXPECT_FALSE(lease.profiler_if_idle().held());
  }
  {
    auto timing = lease.alone();
    EXPECT_FALSE(lease.profiler_if_idle().held());
  }
  auto mine = lease.profiler_if_idle();
  EXPECT_TRUE(mine.held());
  EXPECT_TRUE(lease.state().profiler);
  EXPECT_FALSE(lease.profiler_if_idle().held()) << "two slots held the GPU's profiler";
  mine.release();
  EXPECT_FALSE(lease.state().profiler);
}

TEST(GpuLease, SlotsProfilingTimingAndSharingTogetherNeverDeadlockAndNeverOverlapWrongly) {
  GpuLease lease;
  std::atomic<int> alone{0}, sharing{0}, profilers{0}, wrong{0};
  std::vector<std::thread> slots;
  for (int slot = 0; slot < 6; ++slot) {
    slots.emplace_back([&, slot] {
      for (int job = 0; job < 200; ++job) {
        GpuLease::Hold profiler;
        if ((job + slot) % 3 == 0) {
          profiler = lease.profiler_if_idle();
          if (profiler.held() && ++profilers > 1) ++wrong;
        }
        for (int turn = 0; turn < 3; ++turn) {
          auto shared = lease.share(profiler.held());
          ++sharing;
          if (alone > 0) ++wrong;
          --sharing;
        }
        auto hold = lease.alone(profiler.held());
        if (++alone > 1 || sharing > 0) ++wrong;
        if (!profiler.held() && profilers > 0) ++wrong;
        --alone;
        if (profiler.held()) {
          --profilers;
          profiler.release();
        }
      }
    });
  }
  for (auto& thread : slots) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  const auto end = lease.state();
  EXPECT_EQ(end.sharers, 0);
  EXPECT_FALSE(end.alone || end.profiler || end.profiler_waiting_alone);
}

}  // namespace
}  // namespace cudojo

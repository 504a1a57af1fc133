// Who may use one GPU now. Correctness work (tests, sanitized launches, a worker's CUDA start-up)
// shares the GPU: what it finds does not depend on what else runs. Timing, profiling and the
// shared-memory plantings need it alone: another process's kernels would slow the timed ones, or
// refill the shared memory the judge has just planted. A server judges several jobs at once on one
// GPU, one slot each, and every slot of that GPU holds the same lease.
//
// Writers first: once a slot asks for the GPU alone, no new sharer starts, so a stream of
// correctness work cannot starve timing. Rule for callers, which keeps this free of deadlocks:
// never wait for the lease while holding it (drop a shared hold before asking to be alone).
//
// The profiler: CUPTI's range profiler costs 130-160 ms at its first start after it is enabled, and
// one process's enabled profiler makes every other process's profile fail (HARDWARE_BUSY). So one
// slot at a time may hold the GPU's profiler, taken only on an idle GPU: it enables and warms up
// its profiler while its job compiles, and is the next to be alone, before anyone already waiting.
// While it is held no one else is alone (nobody else can profile or run ncu then, and no timing
// runs beside an enabled profiler), and slots waiting to be alone hold back no sharer until the
// holder itself waits. Its holder may share and be alone as any slot, and lets it go once its
// profile is done.
#pragma once

#include <condition_variable>
#include <mutex>

namespace cudojo {

class GpuLease {
 public:
  enum class Kind { kShared, kAlone, kProfiler };
  // A hold on the lease, released when it goes out of scope (or by release()).
  class Hold {
   public:
    Hold() = default;
    ~Hold() { release(); }
    Hold(Hold&& other) noexcept : lease_(other.lease_), kind_(other.kind_) { other.lease_ = nullptr; }
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    void release();
    // From alone to one sharer among others, with no moment in between when the GPU is not held.
    void share_again();
    bool held() const { return lease_ != nullptr; }
    bool alone() const { return held() && kind_ == Kind::kAlone; }

   private:
    friend class GpuLease;
    Hold(GpuLease* lease, Kind kind) : lease_(lease), kind_(kind) {}
    GpuLease* lease_ = nullptr;
    Kind kind_ = Kind::kShared;
  };

  // Waits while a slot has, or is waiting for, the GPU alone. The profiler's holder (`profiler`
  // true) waits only while another is alone: it warms its profiler up beside the other sharers.
  Hold share(bool profiler = false);
  // Waits until no one else holds the lease and, unless the caller holds the profiler, until no one
  // does: its holder goes first.
  Hold alone(bool profiler = false);
  // The GPU's profiler, only when nothing at all holds or waits for the lease (an idle server), so
  // a job's profiler can warm up while it compiles without holding back another job's timing; an
  // empty hold otherwise. (A profile without it is taken in its turn alone, which no profiler's
  // holder can share.)
  Hold profiler_if_idle();

  struct State {
    int sharers = 0;
    bool alone = false;
    int waiting_alone = 0;  // slots other than the profiler's holder
    bool profiler = false;
    bool profiler_waiting_alone = false;  // its holder waits to be alone (counted apart)
  };
  State state();

 private:
  void release(Kind kind);
  void downgrade();
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_;
};

}  // namespace cudojo

// Who may use one GPU now. Correctness work (tests, sanitized launches, a worker's CUDA start-up)
// shares the GPU: what it finds does not depend on what else runs. Timing, profiling and the
// shared-memory plantings need it alone: another process's kernels would slow the timed ones, or
// refill the shared memory the judge has just planted. A server judges several jobs at once on one
// GPU, one slot each, and every slot of that GPU holds the same lease.
//
// Writers first: once a slot asks for the GPU alone, no new sharer starts, so a stream of
// correctness work cannot starve timing. Rule for callers, which keeps this free of deadlocks:
// never wait for the lease while holding it (drop a shared hold before asking to be alone).
#pragma once

#include <condition_variable>
#include <mutex>

namespace cudojo {

class GpuLease {
 public:
  // A hold on the lease, released when it goes out of scope (or by release()).
  class Hold {
   public:
    Hold() = default;
    ~Hold() { release(); }
    Hold(Hold&& other) noexcept : lease_(other.lease_), alone_(other.alone_) { other.lease_ = nullptr; }
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    void release();
    // From alone to one sharer among others, with no moment in between when the GPU is not held.
    void share_again();
    bool held() const { return lease_ != nullptr; }
    bool alone() const { return held() && alone_; }

   private:
    friend class GpuLease;
    Hold(GpuLease* lease, bool alone) : lease_(lease), alone_(alone) {}
    GpuLease* lease_ = nullptr;
    bool alone_ = false;
  };

  // Waits while a slot has, or is waiting for, the GPU alone.
  Hold share();
  // Waits until no one else holds the lease.
  Hold alone();

  struct State {
    int sharers = 0;
    bool alone = false;
    int waiting_alone = 0;
  };
  State state();

 private:
  void release(bool alone);
  void downgrade();
  std::mutex mutex_;
  std::condition_variable changed_;
  State state_;
};

}  // namespace cudojo

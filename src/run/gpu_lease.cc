#include "run/gpu_lease.h"

namespace cudojo {

GpuLease::Hold& GpuLease::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    release();
    lease_ = other.lease_;
    alone_ = other.alone_;
    other.lease_ = nullptr;
  }
  return *this;
}

void GpuLease::Hold::release() {
  if (!lease_) return;
  lease_->release(alone_);
  lease_ = nullptr;
}

void GpuLease::Hold::share_again() {
  if (!lease_ || !alone_) return;
  lease_->downgrade();
  alone_ = false;
}

GpuLease::Hold GpuLease::share() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !state_.alone && state_.waiting_alone == 0; });
  ++state_.sharers;
  return Hold(this, false);
}

GpuLease::Hold GpuLease::alone() {
  std::unique_lock lock(mutex_);
  ++state_.waiting_alone;
  changed_.wait(lock, [&] { return !state_.alone && state_.sharers == 0; });
  --state_.waiting_alone;
  state_.alone = true;
  return Hold(this, true);
}

GpuLease::State GpuLease::state() {
  std::lock_guard lock(mutex_);
  return state_;
}

void GpuLease::release(bool alone) {
  {
    std::lock_guard lock(mutex_);
    if (alone) {
      state_.alone = false;
    } else {
      --state_.sharers;
    }
  }
  changed_.notify_all();
}

}  // namespace cudojo

namespace cudojo {

void GpuLease::downgrade() {
  {
    std::lock_guard lock(mutex_);
    state_.alone = false;
    ++state_.sharers;
  }
  changed_.notify_all();
}

}  // namespace cudojo

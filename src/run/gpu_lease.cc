#include "run/gpu_lease.h"

namespace cudojo {

GpuLease::Hold& GpuLease::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    release();
    lease_ = other.lease_;
    kind_ = other.kind_;
    other.lease_ = nullptr;
  }
  return *this;
}

void GpuLease::Hold::release() {
  if (!lease_) return;
  lease_->release(kind_);
  lease_ = nullptr;
}

void GpuLease::Hold::share_again() {
  if (!lease_ || kind_ != Kind::kAlone) return;
  lease_->downgrade();
  kind_ = Kind::kShared;
}

GpuLease::Hold GpuLease::share(bool profiler) {
  std::unique_lock lock(mutex_);
  // Writers first, except that while another slot holds the profiler the others waiting to be
  // alone cannot be yet, so they hold back no sharer (the profiler's holder may need its tools to
  // share the GPU before it asks to be alone).
  changed_.wait(lock, [&] {
    if (state_.alone) return false;
    if (profiler) return true;
    return !state_.profiler_waiting_alone && (state_.waiting_alone == 0 || state_.profiler);
  });
  ++state_.sharers;
  return Hold(this, Kind::kShared);
}

GpuLease::Hold GpuLease::alone(bool profiler) {
  std::unique_lock lock(mutex_);
  if (profiler) {
    state_.profiler_waiting_alone = true;
  } else {
    ++state_.waiting_alone;
  }
  changed_.wait(lock, [&] { return !state_.alone && state_.sharers == 0 && (profiler || !state_.profiler); });
  if (profiler) {
    state_.profiler_waiting_alone = false;
  } else {
    --state_.waiting_alone;
  }
  state_.alone = true;
  return Hold(this, Kind::kAlone);
}

GpuLease::Hold GpuLease::profiler_if_idle() {
  std::lock_guard lock(mutex_);
  if (state_.alone || state_.waiting_alone > 0 || state_.profiler || state_.sharers > 0) return Hold();
  state_.profiler = true;
  return Hold(this, Kind::kProfiler);
}

GpuLease::State GpuLease::state() {
  std::lock_guard lock(mutex_);
  return state_;
}

void GpuLease::release(Kind kind) {
  {
    std::lock_guard lock(mutex_);
    switch (kind) {
      case Kind::kAlone:
        state_.alone = false;
        break;
      case Kind::kShared:
        --state_.sharers;
        break;
      case Kind::kProfiler:
        state_.profiler = false;
        break;
    }
  }
  changed_.notify_all();
}

void GpuLease::downgrade() {
  {
    std::lock_guard lock(mutex_);
    state_.alone = false;
    ++state_.sharers;
  }
  changed_.notify_all();
}

}  // namespace cudojo

#include "gpu/gpu_turns.h"

#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

namespace cudojo::gpu_turns {

namespace {

struct State {
  std::optional<Channel> channel;
  Held held = Held::kNothing;
  bool queued = false;  // work enqueued since the last drain
  int briefs = 0;       // synchronous calls under way
  bool planting = false;
  bool span = false;
  bool noise = false;
};

// One lock for the state and the channel: a request and its answer are never interleaved with
// another thread's.
std::mutex mutex;
State state;

void hold_shared(State& s) {
  if (s.held != Held::kNothing) return;
  s.channel->share();
  s.held = Held::kShared;
}

void let_go_if_idle(State& s) {
  if (s.held != Held::kShared && s.held != Held::kAlone) return;
  if (s.queued || s.briefs > 0 || s.planting || s.span || s.noise) return;
  s.channel->release();
  s.held = Held::kNothing;
}

}  // namespace

void open(Channel channel) {
  std::lock_guard lock(mutex);
  state = State{};
  state.channel = std::move(channel);
}

void close() {
  std::lock_guard lock(mutex);
  state = State{};
}

void hold_and_close() {
  std::lock_guard lock(mutex);
  if (state.channel && state.held == Held::kNothing) hold_shared(state);
  state = State{};
}

void enqueue() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  hold_shared(state);
  state.queued = true;
}

void drained() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  state.queued = false;
  let_go_if_idle(state);
}

void brief_begin() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  hold_shared(state);
  ++state.briefs;
}

void brief_end() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  if (state.briefs > 0) --state.briefs;
  let_go_if_idle(state);
}

namespace {

// From shared (or nothing) to alone. Never waits for the GPU while holding it (run/gpu_lease.h):
// the shared turn goes first, and only with nothing of this process's left on the GPU (GpuSession
// drains its stream first).
void hold_alone(State& s, const char* what) {
  if (s.held == Held::kShared) {
    if (s.queued || s.noise || s.briefs > 0)
      throw std::logic_error(std::string(what) + " must begin with nothing of this process's on the GPU");
    s.channel->release();
    s.held = Held::kNothing;
  }
  if (s.held == Held::kNothing) {
    s.channel->alone();
    s.held = Held::kAlone;
  }
}

}  // namespace

void pin_planting() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  hold_alone(state, "a planting");
  state.planting = true;
}

void pin_span() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  hold_alone(state, "a span of plantings");
  state.span = true;
}

void unpin_span() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  state.span = false;
  let_go_if_idle(state);
}

void unpin_planting() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  state.planting = false;
  let_go_if_idle(state);
}

void pin_noise() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  hold_shared(state);
  state.noise = true;
}

void unpin_noise() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  state.noise = false;
  let_go_if_idle(state);
}

void measuring() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  state.held = Held::kMeasuring;
}

void give_back() {
  std::lock_guard lock(mutex);
  if (!state.channel) return;
  state.queued = false;
  state.planting = false;
  state.span = false;
  state.noise = false;
  state.held = Held::kNothing;
}

Held held() {
  std::lock_guard lock(mutex);
  return state.held;
}

}  // namespace cudojo::gpu_turns

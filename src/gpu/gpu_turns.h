// A worker's turns on a GPU that other processes share (a server judges several jobs at once on
// one GPU; run/gpu_lease.h is the parent's side). The process holds the GPU only while it has work
// on it: shared from the first copy or launch until its stream has drained, alone from a
// shared-memory planting until the learner's launch after it has finished. Between those the
// worker computes on the host (data, expected answers, checks) and holds nothing, so another
// job's planting or timing does not wait for that.
//
// Every place that puts work on the GPU calls enqueue() first (gpu/gpu.cc: launches, copies,
// fills, loads, allocations); every synchronization that leaves nothing queued calls drained().
// A pin (a planting, or the judge's noise kernel on its second stream) keeps the turn past a
// drain of the main stream until it is unpinned.
//
// With no channel open (`cudojo check` and the lab, where the GPU is the process's own; a
// worker's start-up and settling, which the parent covers itself) every call does nothing.
#pragma once

#include <functional>

namespace cudojo::gpu_turns {

// How the worker asks its parent. share() and alone() return once the parent holds the GPU for
// this process that way; release() tells it the process has nothing on the GPU.
struct Channel {
  std::function<void()> share;
  std::function<void()> alone;
  std::function<void()> release;
};

enum class Held { kNothing, kShared, kAlone, kMeasuring };

// For one job. close() forgets the channel; whatever is held then is the parent's to release (it
// knows from the messages what it holds for this worker).
void open(Channel channel);
void close();
// At the job's result: holds the GPU (shared, asking first if nothing is held) and forgets the
// channel. What the worker does after its result (freeing the job's buffers, settling, exiting)
// runs under that turn, which the parent keeps until the worker has settled or ended.
void hold_and_close();

// Before work is put on the GPU: holds it, shared unless held already.
void enqueue();
// After a synchronization that left nothing of this process's on the GPU: lets it go, unless
// pinned.
void drained();
// Around a synchronous call that puts nothing on a stream (an allocation, a load): holds the GPU
// during it, and lets it go after unless work is queued or pinned.
void brief_begin();
void brief_end();

// A shared-memory planting: from here until unpin_planting(), this process has the GPU alone.
void pin_planting();
void unpin_planting();
// A test case's plantings under one turn alone, asked for once: from here until unpin_span(),
// plantings and the launches between them keep the GPU alone (each would otherwise ask again and
// wait for every other job's work to drain first). Begin with nothing of this process's queued.
void pin_span();
void unpin_span();
// The judge's noise kernel runs on a second stream: a drain of the main stream does not end the turn.
void pin_noise();
void unpin_noise();

// The parent has given this process the GPU alone to time and profile, to the end of the job:
// nothing more is asked.
void measuring();
// Before the worker asks for the GPU to time (the parent drops whatever it holds for it then).
void give_back();

Held held();

}  // namespace cudojo::gpu_turns

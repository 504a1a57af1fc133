// Every open event stream of this node (GET /api/jobs/{id}/events), fed by one thread. Each poll
// (event_poll_ms, or at once when this node's own judges changed a job) reads the progress of
// every watched job in one Store::job_progress call, and a stream gets an event only when what
// it shows changed: its job's phase or queue position ("progress"), or its result ("result", after
// which the stream ends). An unchanged stream gets a comment every event_heartbeat_ms so proxies
// keep it open, and ends after event_stream_max_seconds.
//
// Places are counted: max_event_streams in all (a stream is refused 429 past it, and the page
// polls instead), and max_event_streams_per_learner each, a learner's next stream closing their
// oldest (with a "replaced" event), so one learner cannot take everyone's places. A stream whose
// client went away gives its place back the moment its connection ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/limits.h"
#include "http/message.h"
#include "serve/store.h"

namespace cudojo {

// What an event stream shows of a job: its first event and the key that says whether a later read
// changed anything.
struct JobEvent {
  std::string key;     // "done", or "<state>/<phase>/<position>"
  std::string bytes;   // "event: progress\ndata: {...}\n\n"
  bool final = false;  // the result: the stream ends after it
};
JobEvent job_event(const JobRecord& job, std::int64_t position);

class JobStreams {
 public:
  JobStreams(Store& store, const ServeLimits& limits);
  ~JobStreams();
  JobStreams(const JobStreams&) = delete;
  JobStreams& operator=(const JobStreams&) = delete;

  void start();
  // Closes every stream and joins the thread; streams asked for after this are refused.
  void stop();

  // One place, held from the request until its stream ends (or given back unused when the
  // reservation is dropped: the client left before the stream opened).
  class Place {
   public:
    Place(JobStreams& streams, std::int64_t learner_id) : streams_(streams), learner_id_(learner_id) {}
    ~Place();
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;

   private:
    friend class JobStreams;
    JobStreams& streams_;
    std::int64_t learner_id_;
    bool attached_ = false;
  };
  // A place for one more stream, or nullptr when all max_event_streams are taken or the streams
  // have stopped.
  std::shared_ptr<Place> reserve(std::int64_t learner_id);
  // The stream of `job_id` opened on `place` (called on the event loop: never blocks); its first
  // event, already sent, showed `first_key`.
  void attach(const std::shared_ptr<Place>& place, std::int64_t job_id, std::string first_key,
              std::shared_ptr<http::ResponseStream> stream);
  // A job changed on this node: look now instead of at the next poll.
  void poke();
  // Ends the learner's open streams on this node (their token was reset, or they were removed): what
  // a ticket opened must not outlive the token it was issued under. Each gets `event: ended` first.
  void close_learner(std::int64_t learner_id);
  int open_count() const;

 private:
  struct Entry {
    std::int64_t learner_id = 0;
    std::int64_t job_id = 0;
    std::string last_key;
    std::shared_ptr<http::ResponseStream> stream;
    std::chrono::steady_clock::time_point opened;
    std::chrono::steady_clock::time_point last_write;
  };
  void run();
  void poll_once();
  void remove(std::int64_t entry_id);

  Store& store_;
  const ServeLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool poked_ = false;
  bool stopping_ = false;
  int places_taken_ = 0;
  std::int64_t next_entry_id_ = 1;
  std::map<std::int64_t, Entry> entries_;  // by entry id: the oldest first
  std::thread thread_;
  bool store_failing_ = false;  // said once per outage
};

}  // namespace cudojo

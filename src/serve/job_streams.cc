#include "serve/job_streams.h"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "common/json_text.h"
#include "serve/job_json.h"

namespace cudojo {

namespace {

constexpr char kHeartbeat[] = ": still here\n\n";
// Sent to a learner's oldest stream when their newest takes its place: the page then stops
// following it (EventSource would otherwise reconnect, and take the place back).
constexpr char kReplaced[] =
    "event: replaced\ndata: {\"reason\": \"this learner opened another stream; poll GET "
    "/api/jobs/{id}\"}\n\n";

std::string progress_key(JobState state, const std::string& phase, std::int64_t position) {
  if (state == JobState::kDone) return "done";
  return fmt::format("{}/{}/{}", to_string(state), phase, state == JobState::kQueued ? position : 0);
}

}  // namespace

JobEvent job_event(const JobRecord& job, std::int64_t position) {
  JobEvent event;
  event.final = job.state == JobState::kDone;
  event.key = progress_key(job.state, job.phase, position);
  event.bytes = fmt::format("event: {}\ndata: {}\n\n", event.final ? "result" : "progress",
                            json_text(job_json(job, position, false)));
  return event;
}

JobStreams::JobStreams(Store& store, const ServeLimits& limits) : store_(store), limits_(limits) {}

JobStreams::~JobStreams() { stop(); }

JobStreams::Place::~Place() {
  if (attached_) return;
  std::lock_guard lock(streams_.mutex_);
  --streams_.places_taken_;
}

void JobStreams::start() {
  thread_ = std::thread([this] { run(); });
}

void JobStreams::stop() {
  std::vector<std::shared_ptr<http::ResponseStream>> open;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    for (auto& [id, entry] : entries_) open.push_back(entry.stream);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& stream : open) stream->close();
}

std::shared_ptr<JobStreams::Place> JobStreams::reserve(std::int64_t learner_id) {
  std::lock_guard lock(mutex_);
  if (stopping_ || places_taken_ >= limits_.max_event_streams) return nullptr;
  ++places_taken_;
  return std::make_shared<Place>(*this, learner_id);
}

void JobStreams::attach(const std::shared_ptr<Place>& place, std::int64_t job_id, std::string first_key,
                        std::shared_ptr<http::ResponseStream> stream) {
  std::vector<std::shared_ptr<http::ResponseStream>> replaced;
  std::int64_t entry_id = 0;
  {
    std::lock_guard lock(mutex_);
    place->attached_ = true;  // its count moves to the entry, given back by remove()
    entry_id = next_entry_id_++;
    // The learner's oldest streams make room, so they hold at most max_event_streams_per_learner.
    int theirs = 0;
    for (const auto& [id, entry] : entries_)
      theirs += entry.learner_id == place->learner_id_ && entry.stream->is_open();
    for (auto& [id, entry] : entries_) {
      if (theirs < limits_.max_event_streams_per_learner) break;
      if (entry.learner_id != place->learner_id_ || !entry.stream->is_open()) continue;
      replaced.push_back(entry.stream);
      --theirs;
    }
    const auto now = std::chrono::steady_clock::now();
    entries_[entry_id] = {place->learner_id_, job_id, std::move(first_key), stream, now, now};
    if (stopping_) replaced.push_back(stream);
  }
  // Set outside the lock: a stream that already ended calls back at once on some paths.
  stream->on_close([this, entry_id] { remove(entry_id); });
  for (auto& old : replaced) {
    old->write(kReplaced);
    old->close();
  }
  poke();
}

void JobStreams::close_learner(std::int64_t learner_id) {
  std::vector<std::shared_ptr<http::ResponseStream>> theirs;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, entry] : entries_)
      if (entry.learner_id == learner_id) theirs.push_back(entry.stream);
  }
  for (auto& stream : theirs) {
    stream->write(
        "event: ended\ndata: {\"reason\": \"this learner's token was reset or they were removed; sign in "
        "again\"}\n\n");
    stream->close();
  }
}

void JobStreams::remove(std::int64_t entry_id) {
  std::lock_guard lock(mutex_);
  if (entries_.erase(entry_id) > 0) --places_taken_;
}

void JobStreams::poke() {
  {
    std::lock_guard lock(mutex_);
    poked_ = true;
  }
  wake_.notify_one();
}

int JobStreams::open_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(entries_.size());
}

void JobStreams::run() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(limits_.event_poll_ms),
                     [this] { return poked_ || stopping_; });
      if (stopping_) return;
      poked_ = false;
    }
    try {
      poll_once();
    } catch (const std::exception& error) {
      fmt::print(stderr, "cudojo serve: the event streams could not be fed: {}\n", error.what());
    }
  }
}

void JobStreams::poll_once() {
  std::set<std::int64_t> watched;
  std::map<std::int64_t, std::set<std::string>> keys_shown;  // per job: what its streams show now
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, entry] : entries_) {
      if (!entry.stream->is_open()) continue;
      watched.insert(entry.job_id);
      keys_shown[entry.job_id].insert(entry.last_key);
    }
  }
  if (watched.empty()) return;
  std::vector<JobProgress> progress;
  bool read = true;
  try {
    progress = store_.job_progress({watched.begin(), watched.end()});
    if (store_failing_) fmt::print(stderr, "cudojo serve: the event streams read the store again\n");
    store_failing_ = false;
  } catch (const StoreError& error) {
    // The streams stay open (with their heartbeats) and catch up once the store answers.
    if (!store_failing_)
      fmt::print(stderr, "cudojo serve: the event streams cannot read the store: {}\n", error.what());
    store_failing_ = true;
    read = false;
  }
  std::set<std::int64_t> existing;
  std::map<std::int64_t, JobEvent> events;  // the jobs whose streams show something out of date
  // Each job's learner as read now: a stream only ever shows its own learner's job. (A SQLite id can
  // come back after a withdrawn job's row is deleted: the id then names another learner's job.)
  std::map<std::int64_t, std::int64_t> owners;
  for (const JobProgress& job : progress) {
    existing.insert(job.id);
    const std::string key = progress_key(job.state, job.phase, job.position);
    const auto& shown = keys_shown[job.id];
    if (shown.size() == 1 && *shown.begin() == key) continue;
    // Read whole only now, for the event's body: the report arrives with the result.
    try {
      if (auto record = store_.job(job.id)) {
        events[job.id] = job_event(*record, job.position);
        owners[job.id] = record->learner_id;
      }
    } catch (const StoreError&) {
      // Sent at the next poll that can read it.
    }
  }
  if (!read) existing = watched;

  std::vector<std::shared_ptr<http::ResponseStream>> to_close;
  const auto now = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  for (auto& [id, entry] : entries_) {
    if (!entry.stream->is_open()) continue;
    // A stream attached while the store was read is left to the next poll: its job was not asked
    // about, which says nothing of whether it exists.
    if (!watched.count(entry.job_id)) continue;
    if (!existing.count(entry.job_id)) {
      to_close.push_back(entry.stream);  // the job is gone
      continue;
    }
    const auto owner = owners.find(entry.job_id);
    if (owner != owners.end() && owner->second != entry.learner_id) {
      to_close.push_back(entry.stream);  // the id names another learner's job now
      continue;
    }
    const auto event = events.find(entry.job_id);
    if (event != events.end() && event->second.key != entry.last_key) {
      entry.last_key = event->second.key;
      entry.last_write = now;
      entry.stream->write(event->second.bytes);
      if (event->second.final) to_close.push_back(entry.stream);
    } else if (now - entry.last_write >= std::chrono::milliseconds(limits_.event_heartbeat_ms)) {
      entry.last_write = now;
      entry.stream->write(kHeartbeat);
    }
    if (now - entry.opened >= std::chrono::duration<double>(limits_.event_stream_max_seconds))
      to_close.push_back(entry.stream);
  }
  lock.unlock();
  for (auto& stream : to_close) stream->close();
}

}  // namespace cudojo

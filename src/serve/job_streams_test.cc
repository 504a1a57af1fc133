#include "serve/job_streams.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "serve/sqlite_store.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What the HTTP server gives JobStreams, kept in memory: what was written, and whether it closed.
class RecordedStream final : public http::ResponseStream {
 public:
  bool write(std::string bytes) override {
    std::lock_guard lock(mutex_);
    if (!open_) return false;
    written_ += bytes;
    return true;
  }
  void close() override { end(); }
  bool is_open() const override {
    std::lock_guard lock(mutex_);
    return open_;
  }
  void on_close(std::function<void()> callback) override {
    std::lock_guard lock(mutex_);
    on_close_ = std::move(callback);
  }
  // The client went away (or close() ran): the server calls back, as http::Server does.
  void end() {
    std::function<void()> callback;
    {
      std::lock_guard lock(mutex_);
      if (!open_) return;
      open_ = false;
      callback = std::move(on_close_);
    }
    if (callback) callback();
  }
  std::string written() const {
    std::lock_guard lock(mutex_);
    return written_;
  }
  // Waits up to `timeout` for `text` to be written; how long it took, or nullopt.
  std::optional<std::chrono::milliseconds> wait_for(const std::string& text,
                                                    std::chrono::milliseconds timeout) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < timeout) {
      if (written().find(text) != std::string::npos)
        return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                     start);
      std::this_thread::sleep_for(2ms);
    }
    return std::nullopt;
  }

 private:
  mutable std::mutex mutex_;
  std::string written_;
  bool open_ = true;
  std::function<void()> on_close_;
};

class JobStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("cudojo_streams_" + std::to_string(getpid()) + "_" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    store_ = std::make_unique<SqliteStore>(folder_ / "cudojo.sqlite3");
    ada_ = store_->create_learner("ada").learner.id;
    bob_ = store_->create_learner("bob").learner.id;
    limits_.event_poll_ms = 20;
  }
  void TearDown() override {
    streams_.reset();
    store_.reset();
    fs::remove_all(folder_);
  }
  JobStreams& streams() {
    if (!streams_) {
      streams_ = std::make_unique<JobStreams>(*store_, limits_);
      streams_->start();
    }
    return *streams_;
  }
  // A stream of `job` for `learner` as the API opens one; null when no place was free.
  std::shared_ptr<RecordedStream> open(std::int64_t learner, std::int64_t job) {
    auto place = streams().reserve(learner);
    if (!place) return nullptr;
    const auto record = store_->job(job);
    const JobEvent first = job_event(*record, store_->queue_position(job));
    auto stream = std::make_shared<RecordedStream>();
    stream->write(first.bytes);
    streams().attach(place, job, first.key, stream);
    return stream;
  }

  fs::path folder_;
  std::unique_ptr<SqliteStore> store_;
  ServeLimits limits_;
  std::unique_ptr<JobStreams> streams_;
  std::int64_t ada_ = 0, bob_ = 0;
};

TEST_F(JobStreamsTest, APhaseWrittenByAnotherNodeArrivesWithinAPoll) {
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  auto stream = open(ada_, job);
  ASSERT_TRUE(stream);
  const auto claimed = store_->claim_next("elsewhere#1", 30);
  ASSERT_TRUE(claimed);
  ASSERT_TRUE(store_->set_phase(claimed->claim(), "tests"));
  const auto took = stream->wait_for("\"phase\":\"tests\"", 1000ms);
  ASSERT_TRUE(took) << stream->written();
  EXPECT_LT(*took, 200ms);
  EXPECT_NE(stream->written().find("event: progress"), std::string::npos);
}

TEST_F(JobStreamsTest, APokeSendsAtOnceWithoutWaitingForThePoll) {
  limits_.event_poll_ms = 60'000;
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  auto stream = open(ada_, job);
  const auto claimed = store_->claim_next("here#1", 30);
  store_->set_phase(claimed->claim(), "compiled");
  streams().poke();
  const auto took = stream->wait_for("\"phase\":\"compiled\"", 1000ms);
  ASSERT_TRUE(took) << stream->written();
  EXPECT_LT(*took, 200ms);
}

TEST_F(JobStreamsTest, TheQueuePositionIsFollowedAndTheResultEndsTheStream) {
  const auto first = store_->enqueue(bob_, "reduction/3", "x");
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  auto stream = open(ada_, job);
  EXPECT_NE(stream->written().find("\"position\":1"), std::string::npos) << stream->written();
  ASSERT_EQ(store_->claim_next("here#1", 30)->id, first);
  ASSERT_TRUE(stream->wait_for("\"position\":0", 1000ms)) << stream->written();
  const auto mine = store_->claim_next("here#1", 30);
  ASSERT_TRUE(store_->finish(mine->claim(), "accepted", "{\"verdict\": \"accepted\"}"));
  ASSERT_TRUE(stream->wait_for("event: result", 1000ms)) << stream->written();
  EXPECT_NE(stream->written().find("\"verdict\":\"accepted\""), std::string::npos);
  EXPECT_FALSE(stream->is_open());
  EXPECT_EQ(streams().open_count(), 0);
}

// A withdrawn job's row is deleted, and SQLite gives the newest id out again: ada's open stream never
// shows bob's job that now has the id; it closes once a poll reads that job.
TEST_F(JobStreamsTest, AStreamNeverShowsAnotherLearnersJobUnderItsId) {
  limits_.event_poll_ms = 60'000;  // the polls are the test's pokes
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  auto stream = open(ada_, job);
  ASSERT_TRUE(store_->withdraw_queued(job, ada_));
  const auto bobs = store_->enqueue(bob_, "atomics/2", "bob's source");
  ASSERT_EQ(bobs, job) << "SQLite gave a new id: this test no longer covers the reuse";
  const std::string before = stream->written();
  // Bob's job moves on: what a poll reads of it is his, so ada's stream closes with nothing written.
  const auto claimed = store_->claim_next("here#1", 30);
  ASSERT_TRUE(claimed && claimed->id == bobs);
  ASSERT_TRUE(store_->set_phase(claimed->claim(), "tests"));
  streams().poke();
  for (int wait = 0; wait < 100 && stream->is_open(); ++wait) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(stream->is_open());
  EXPECT_EQ(stream->written(), before);
  // Bob's own stream of it is his to keep.
  auto his = open(bob_, bobs);
  ASSERT_TRUE(store_->set_phase(claimed->claim(), "timing"));
  streams().poke();
  ASSERT_TRUE(his->wait_for("\"phase\":\"timing\"", 1000ms)) << his->written();
}

TEST_F(JobStreamsTest, PlacesAreCountedAndADroppedStreamGivesItsPlaceBackAtOnce) {
  limits_.max_event_streams = 2;
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  const auto other = store_->enqueue(bob_, "reduction/3", "x");
  auto one = open(ada_, job);
  auto two = open(bob_, other);
  ASSERT_TRUE(one && two);
  EXPECT_FALSE(open(bob_, other));
  one->end();  // the client went away
  EXPECT_TRUE(open(bob_, other));
  // A place reserved for a stream that never opened (its client left first) is given back too.
  auto unused = streams().reserve(ada_);
  EXPECT_FALSE(unused);
  two->end();
  unused = streams().reserve(ada_);
  ASSERT_TRUE(unused);
  unused.reset();
  EXPECT_TRUE(streams().reserve(ada_));
}

TEST_F(JobStreamsTest, ALearnersNextStreamClosesTheirOldestAndNoOneElses) {
  limits_.max_event_streams_per_learner = 2;
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  const auto bobs = store_->enqueue(bob_, "reduction/3", "x");
  auto bob_stream = open(bob_, bobs);
  auto first = open(ada_, job);
  auto second = open(ada_, job);
  EXPECT_TRUE(first->is_open());
  auto third = open(ada_, job);
  ASSERT_TRUE(third);
  EXPECT_FALSE(first->is_open());
  EXPECT_NE(first->written().find("event: replaced"), std::string::npos);
  EXPECT_TRUE(second->is_open());
  EXPECT_TRUE(third->is_open());
  EXPECT_TRUE(bob_stream->is_open());
}

TEST_F(JobStreamsTest, AnUnchangedStreamGetsHeartbeatsAndEndsAtItsMaximumAge) {
  limits_.event_heartbeat_ms = 30;
  limits_.event_stream_max_seconds = 0.3;
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  auto stream = open(ada_, job);
  EXPECT_TRUE(stream->wait_for(": still here", 1000ms)) << stream->written();
  for (int i = 0; i < 100 && stream->is_open(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(stream->is_open());
}

// Streams attached while a poll reads the store were not part of that read: they must not be taken
// for streams of jobs that are gone (a class connecting at once opened 300 and lost half).
TEST_F(JobStreamsTest, StreamsAttachedDuringAPollStayOpen) {
  limits_.event_poll_ms = 1;
  std::vector<std::int64_t> jobs;
  for (int i = 0; i < 200; ++i) {
    const auto learner = store_->create_learner("learner " + std::to_string(i)).learner.id;
    jobs.push_back(store_->enqueue(learner, "reduction/3", "x"));
  }
  std::vector<std::shared_ptr<RecordedStream>> streams;
  for (std::int64_t job : jobs) streams.push_back(open(store_->job(job)->learner_id, job));
  std::this_thread::sleep_for(200ms);
  int closed = 0;
  for (const auto& stream : streams) closed += !stream->is_open();
  EXPECT_EQ(closed, 0) << "of 200 streams of queued jobs";
}

TEST_F(JobStreamsTest, StopClosesEveryStreamAndRefusesNewOnes) {
  const auto job = store_->enqueue(ada_, "reduction/3", "x");
  auto one = open(ada_, job);
  auto two = open(bob_, store_->enqueue(bob_, "reduction/3", "x"));
  streams().stop();
  EXPECT_FALSE(one->is_open());
  EXPECT_FALSE(two->is_open());
  EXPECT_FALSE(streams().reserve(ada_));
}

}  // namespace
}  // namespace cudojo

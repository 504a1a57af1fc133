#include "serve/watched_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "serve/sqlite_store.h"
#include "serve/store_test_support.h"

namespace cudojo {
namespace {

namespace fs = std::filesystem;

class WatchedStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("cudojo_watched_" + std::to_string(getpid()) + "_" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    store_ = std::make_unique<SqliteStore>(file());
    watched_ = std::make_unique<WatchedStore>(*store_);
  }
  void TearDown() override {
    watched_.reset();
    store_.reset();
    fs::remove_all(folder_);
  }
  fs::path file() const { return folder_ / "cudojo.sqlite3"; }
  fs::path folder_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<WatchedStore> watched_;
};

TEST_F(WatchedStoreTest, AFailedWriteIsRememberedUntilAWriteSucceeds) {
  const auto ada = watched_->create_learner("ada").learner.id;
  EXPECT_FALSE(watched_->write_failure());
  ASSERT_TRUE(testing::refuse_new_learners(file().string()));
  EXPECT_THROW(watched_->create_learner("bob"), StoreError);
  const auto failure = watched_->write_failure();
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->cause.find("refused by the test"), std::string::npos) << failure->cause;
  EXPECT_GT(failure->since, 0);
  // Reads still answer, and do not clear it.
  EXPECT_TRUE(watched_->job_progress({}).empty());
  EXPECT_TRUE(watched_->write_failure());
  // A claim that found nothing wrote nothing: still failing.
  EXPECT_FALSE(watched_->claim_next("node#1", 30));
  EXPECT_TRUE(watched_->write_failure());
  watched_->enqueue(ada, "reduction/3", "x");
  EXPECT_FALSE(watched_->write_failure());
}

TEST_F(WatchedStoreTest, ARefusalOfTheRequestIsNotTheStoresFailure) {
  watched_->create_learner("ada");
  EXPECT_THROW(watched_->create_learner("ada"), StoreError);   // taken
  EXPECT_THROW(watched_->create_learner("a  b"), StoreError);  // malformed
  EXPECT_FALSE(watched_->write_failure());
}

}  // namespace
}  // namespace cudojo

// Store tests of learners, on both stores: tokens and the digests stored for them, names, the
// leaderboard flag, and a write the database refuses.
#include <string>

#include "serve/store_test_fixture.h"

namespace cudojo::store_test {

// The one instantiation of StoreTest: every store_*_test.cc's TEST_P runs on both stores.
INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST_P(StoreTest, TokensAuthenticateAndOnlyTheirDigestIsStored) {
  std::string token;
  {
    Store& store = reopen();
    IssuedLearner issued = store.create_learner("ada");
    token = issued.token;
    EXPECT_EQ(token.size(), 64u);
    auto found = store.find_learner_by_token(token);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->name, "ada");
    EXPECT_FALSE(store.find_learner_by_token(token + "x").has_value());
    EXPECT_FALSE(store.find_learner_by_token("").has_value());
  }
  // The database never holds the token itself, only its digest.
  expect_only_digest_stored("learners", token);
}

TEST_P(StoreTest, NamesAreUniqueAndChecked) {
  Store& store = reopen();
  store.create_learner("ada");
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kNameTaken);
  EXPECT_EQ(error_code([&] { store.create_learner(""); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner(std::string(41, 'a')); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("robert'); DROP TABLE jobs;--"); }),
            StoreErrorCode::kInvalidName);
}

TEST_P(StoreTest, NamesMayHoldSingleSpacesAndAreTrimmed) {
  Store& store = reopen();
  EXPECT_EQ(store.create_learner("  Ada Lovelace ").learner.name, "Ada Lovelace");
  EXPECT_EQ(error_code([&] { store.create_learner("Ada Lovelace"); }), StoreErrorCode::kNameTaken);
  EXPECT_EQ(store.create_learner("a.b_c-d e").learner.name, "a.b_c-d e");
  EXPECT_EQ(error_code([&] { store.create_learner("two  spaces"); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("   "); }), StoreErrorCode::kInvalidName);
  EXPECT_EQ(error_code([&] { store.create_learner("tab\there"); }), StoreErrorCode::kInvalidName);
  // 40 characters after trimming are allowed; 41 are not.
  EXPECT_EQ(
      store.create_learner(" " + std::string(19, 'x') + " " + std::string(20, 'y') + " ").learner.name.size(),
      40u);
  EXPECT_EQ(error_code([&] { store.create_learner(std::string(20, 'x') + " " + std::string(20, 'y')); }),
            StoreErrorCode::kInvalidName);
}

TEST_P(StoreTest, TheLeaderboardFlagIsOffUntilSetAndSurvivesReopening) {
  std::string token;
  {
    Store& store = reopen();
    auto issued = store.create_learner("ada");
    token = issued.token;
    EXPECT_FALSE(store.find_learner_by_token(token)->leaderboard);
    auto updated = store.set_leaderboard(issued.learner.id, true);
    ASSERT_TRUE(updated.has_value());
    EXPECT_TRUE(updated->leaderboard);
    EXPECT_EQ(updated->name, "ada");
    EXPECT_FALSE(store.set_leaderboard(999, true).has_value());
  }
  Store& store = reopen();
  EXPECT_TRUE(store.find_learner_by_token(token)->leaderboard);
}

TEST_P(StoreTest, AFailingInsertIsAnInternalErrorNotTheCallersMistake) {
  Store& store = reopen();
  ASSERT_TRUE(testing::refuse_new_learners(location_));
  EXPECT_EQ(error_code([&] { store.create_learner("ada"); }), StoreErrorCode::kInternal);
}

// Any node reads the digest a learner's event-stream tickets are keyed by: the stored digest of the
// token issued, never the token.
TEST_P(StoreTest, TheTokenDigestIsReadByLearnerId) {
  Store& store = reopen();
  const IssuedLearner ada = store.create_learner("ada");
  const IssuedLearner bob = store.create_learner("bob");
  EXPECT_EQ(store.learner_token_digest(ada.learner.id), std::optional<std::string>(token_digest(ada.token)));
  EXPECT_EQ(store.learner_token_digest(bob.learner.id), std::optional<std::string>(token_digest(bob.token)));
  EXPECT_EQ(another().learner_token_digest(ada.learner.id),
            std::optional<std::string>(token_digest(ada.token)));
  EXPECT_FALSE(store.learner_token_digest(bob.learner.id + 1000).has_value());
}

}  // namespace cudojo::store_test

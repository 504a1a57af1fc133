#include "common/limits.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TEST(SourceSize, UpToTheLimitIsFineOneByteMoreIsRefusedWithBothNumbers) {
  EXPECT_FALSE(source_size_error(kDefaultLimits.max_source_bytes));
  const auto refused = source_size_error(kDefaultLimits.max_source_bytes + 1);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find(std::to_string(kDefaultLimits.max_source_bytes + 1)), std::string::npos)
      << *refused;
  EXPECT_NE(refused->find(std::to_string(kDefaultLimits.max_source_bytes)), std::string::npos) << *refused;
}

TEST(SourceSize, FollowsTheLimitsItIsGiven) {
  JudgeLimits small;
  small.max_source_bytes = 10;
  EXPECT_TRUE(source_size_error(11, small));
  EXPECT_FALSE(source_size_error(10, small));
}

}  // namespace
}  // namespace cudojo

#include "measure/stats.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TEST(Stats, SummarizeGivesMedianMinMax) {
  TimeStats stats = summarize({5.0, 1.0, 3.0, 2.0, 4.0});
  EXPECT_DOUBLE_EQ(stats.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(stats.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(stats.max_ms, 5.0);
  EXPECT_EQ(stats.samples, 5);
  EXPECT_DOUBLE_EQ(summarize({1.0, 2.0}).median_ms, 1.5);
  EXPECT_EQ(summarize({}).samples, 0);
}

TEST(StopRule, NeedsTheMinimumSamplesEvenWhenQuiet) {
  StopRule rule;
  for (int i = 0; i < 19; ++i) rule.add(1.0);
  EXPECT_FALSE(rule.done());
  rule.add(1.0);
  EXPECT_TRUE(rule.done());
}

TEST(StopRule, KeepsGoingWhileNoisy) {
  StopRule rule(StopRule::Settings{20, 100, 0.05, 1e9});
  for (int i = 0; i < 40; ++i) rule.add(i % 2 ? 1.0 : 2.0);
  EXPECT_FALSE(rule.done());
  for (int i = 0; i < 60; ++i) rule.add(1.5);
  EXPECT_TRUE(rule.done());  // the maximum sample count ends it
}

TEST(StopRule, StopsOnceEnoughTimeWasMeasured) {
  StopRule rule(StopRule::Settings{20, 200, 0.0, 100.0});
  for (int i = 0; i < 20; ++i) rule.add(i % 2 ? 4.0 : 6.0);
  EXPECT_TRUE(rule.done());  // 100 ms measured
}

}  // namespace
}  // namespace cudojo

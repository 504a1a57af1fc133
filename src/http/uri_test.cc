#include "http/uri.h"

#include <gtest/gtest.h>

namespace cudojo::http {
namespace {

TEST(PercentDecode, DecodesEscapesAndKeepsPlusInPaths) {
  EXPECT_EQ(percent_decode("/api/stages/reduction%2F3"), "/api/stages/reduction/3");
  EXPECT_EQ(percent_decode("a+b"), "a+b");
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("%41%62"), "Ab");
}

TEST(PercentDecode, RefusesMalformedEscapesAndNul) {
  EXPECT_FALSE(percent_decode("%"));
  EXPECT_FALSE(percent_decode("%4"));
  EXPECT_FALSE(percent_decode("%zz"));
  EXPECT_FALSE(percent_decode("/katex.min.js%00.html"));
}

TEST(ParseTarget, SplitsPathAndQueryParameters) {
  const auto target = parse_target("/api/history?stage=reduction%2F3&limit=5&&flag&name=a+b");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->path, "/api/history");
  EXPECT_EQ(target->query, "stage=reduction%2F3&limit=5&&flag&name=a+b");
  ASSERT_EQ(target->params.size(), 4u);
  EXPECT_EQ(target->params[0], (std::pair<std::string, std::string>{"stage", "reduction/3"}));
  EXPECT_EQ(target->params[1].second, "5");
  EXPECT_EQ(target->params[2], (std::pair<std::string, std::string>{"flag", ""}));
  EXPECT_EQ(target->params[3].second, "a b");
}

TEST(ParseTarget, RefusesTargetsThatAreNotAnOriginPathOrHoldBadEscapes) {
  EXPECT_FALSE(parse_target("http://example.com/"));
  EXPECT_FALSE(parse_target("*"));
  EXPECT_FALSE(parse_target(""));
  EXPECT_FALSE(parse_target("/a%0"));
  EXPECT_FALSE(parse_target("/a?b=%00"));
}

}  // namespace
}  // namespace cudojo::http

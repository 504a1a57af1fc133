#include "http/range.h"

#include <gtest/gtest.h>

#include <string>

namespace cudojo::http {
namespace {

using Kind = RangeAnswer::Kind;

TEST(Range, NoHeaderOrAnotherUnitIsTheWholeBody) {
  EXPECT_EQ(answer_range(std::nullopt, 100).kind, Kind::kWhole);
  EXPECT_EQ(answer_range("items=0-5", 100).kind, Kind::kWhole);
  EXPECT_EQ(answer_range("bytes", 100).kind, Kind::kWhole);
}

TEST(Range, OneRangeIsOneSliceOfTheBody) {
  auto part = answer_range("bytes=0-99", 1000);
  EXPECT_EQ(part.kind, Kind::kPart);
  EXPECT_EQ(part.first, 0u);
  EXPECT_EQ(part.length, 100u);
  part = answer_range("bytes=990-", 1000);
  EXPECT_EQ(part.first, 990u);
  EXPECT_EQ(part.length, 10u);
  part = answer_range("bytes=-10", 1000);
  EXPECT_EQ(part.first, 990u);
  EXPECT_EQ(part.length, 10u);
  part = answer_range("bytes=500-5000", 1000);  // past the end: up to the end
  EXPECT_EQ(part.length, 500u);
  part = answer_range("BYTES=-5000", 1000);  // more than the body: all of it
  EXPECT_EQ(part.first, 0u);
  EXPECT_EQ(part.length, 1000u);
}

TEST(Range, ManyRangesAreTheWholeBodyOnceNeverAMultipartAnswer) {
  std::string many = "bytes=0-";
  for (int i = 0; i < 2700; ++i) many += ",0-";
  EXPECT_EQ(answer_range(many, 273'081).kind, Kind::kWhole);
  EXPECT_EQ(answer_range("bytes=0-1,5-6", 100).kind, Kind::kWhole);
}

TEST(Range, OnlyBytesPastTheEndIsUnsatisfiable) {
  EXPECT_EQ(answer_range("bytes=1000-", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(answer_range("bytes=5000-6000", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(answer_range("bytes=-0", 1000).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(answer_range("bytes=0-", 0).kind, Kind::kUnsatisfiable);
}

TEST(Range, MalformedRangesAreIgnored) {
  for (const char* malformed : {"bytes=", "bytes=-", "bytes=a-b", "bytes=5-1", "bytes= 0-1", "bytes=0-1x"})
    EXPECT_EQ(answer_range(malformed, 100).kind, Kind::kWhole) << malformed;
  // Numbers too large for any body saturate rather than wrap.
  EXPECT_EQ(answer_range("bytes=99999999999999999999999-", 100).kind, Kind::kUnsatisfiable);
  EXPECT_EQ(answer_range("bytes=0-99999999999999999999999", 100).length, 100u);
}

}  // namespace
}  // namespace cudojo::http

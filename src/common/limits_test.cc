#include "common/limits.h"

#include <gtest/gtest.h>

#include <set>

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

namespace cudojo {
namespace {

TEST(ServeLimitFields, EveryNameIsUniqueAndReadsItsDefault) {
  std::set<std::string> names;
  const ServeLimits defaults;
  for (const auto& field : serve_limit_fields()) {
    EXPECT_TRUE(names.insert(field.name).second) << field.name;
    EXPECT_FALSE(field.read(defaults).empty()) << field.name;
  }
  EXPECT_EQ(serve_limit_fields().size(), names.size());
  EXPECT_TRUE(names.count("max_connections_per_address"));
  EXPECT_TRUE(names.count("header_deadline_ms"));
}

TEST(ServeLimitFields, ALimitIsSetByNameAndEveryOneRoundTrips) {
  ServeLimits limits;
  EXPECT_FALSE(apply_serve_limit(limits, "max_queue_length=2000"));
  EXPECT_EQ(limits.max_queue_length, 2000);
  EXPECT_FALSE(apply_serve_limit(limits, "job_lease_seconds=12.5"));
  EXPECT_DOUBLE_EQ(limits.job_lease_seconds, 12.5);
  EXPECT_FALSE(apply_serve_limit(limits, "max_header_bytes=32768"));
  EXPECT_EQ(limits.max_header_bytes, 32768u);
  for (const auto& field : serve_limit_fields()) {
    ServeLimits changed;
    ASSERT_FALSE(apply_serve_limit(changed, std::string(field.name) + "=7")) << field.name;
    EXPECT_EQ(field.read(changed), "7") << field.name;
  }
}

TEST(ServeLimitFields, BadAssignmentsAreRefusedWithWhatWasWrong) {
  ServeLimits limits;
  const auto unknown = apply_serve_limit(limits, "max_qeue_length=5");
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->find("max_queue_length"), std::string::npos) << *unknown;  // the known names
  for (const char* bad : {"max_queue_length", "=5", "max_queue_length=", "max_queue_length=-1",
                          "max_queue_length=0", "max_queue_length=5x", "max_queue_length=1e3",
                          "max_queue_length=99999999999", "job_lease_seconds=nan", "job_lease_seconds=0"}) {
    EXPECT_TRUE(apply_serve_limit(limits, bad)) << bad;
  }
  EXPECT_EQ(limits.max_queue_length, ServeLimits{}.max_queue_length);
}

}  // namespace
}  // namespace cudojo

#include "http/static_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace cudojo::http {
namespace {

namespace fs = std::filesystem;

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("cudojo_static_" + std::to_string(getpid()));
    fs::create_directories(folder_);
    std::ofstream(folder_ / "app.js") << std::string(1000, 'a');
    std::ofstream(folder_ / "notes.md") << "# not served";
    ASSERT_FALSE(files_.add("/app.js", folder_ / "app.js"));
  }
  void TearDown() override { fs::remove_all(folder_); }
  Response answer(std::vector<Header> headers, std::string method = "GET") {
    Request request;
    request.method = std::move(method);
    request.headers = std::move(headers);
    Response response;
    files_.answer("/app.js", request, response);
    return response;
  }
  fs::path folder_;
  StaticFiles files_;
};

TEST_F(StaticFilesTest, AFileIsAnsweredFromOneSharedCopyWithItsType) {
  const Response first = answer({});
  const Response second = answer({});
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.header("Content-Type"), "text/javascript; charset=utf-8");
  ASSERT_TRUE(first.shared_body);
  EXPECT_EQ(first.shared_body.get(), second.shared_body.get());
  EXPECT_EQ(first.content_length(), 1000u);
  EXPECT_TRUE(first.body.empty());
}

TEST_F(StaticFilesTest, OnlyKnownKindsOfFileAreTaken) {
  const auto problem = files_.add("/notes.md", folder_ / "notes.md");
  ASSERT_TRUE(problem);
  EXPECT_FALSE(files_.contains("/notes.md"));
  EXPECT_TRUE(files_.add("/missing.js", folder_ / "missing.js"));
  EXPECT_EQ(content_type_for("x.woff2"), "font/woff2");
  EXPECT_FALSE(content_type_for("x.js.map"));
}

TEST_F(StaticFilesTest, AMatchingETagIsNotModified) {
  const Response first = answer({});
  const std::string etag(*first.header("ETag"));
  const Response again = answer({{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(again.content_length(), 0u);
  EXPECT_EQ(answer({{"If-None-Match", "\"other\""}}).status, 200);
}

TEST_F(StaticFilesTest, OneRangeIsPartialManyAreTheWholeFilePastTheEndIs416) {
  const Response part = answer({{"Range", "bytes=10-19"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.content_length(), 10u);
  EXPECT_EQ(part.shared_offset, 10u);
  EXPECT_EQ(part.header("Content-Range"), "bytes 10-19/1000");
  std::string many = "bytes=0-";
  for (int i = 0; i < 2700; ++i) many += ",0-";
  const Response whole = answer({{"Range", many}});
  EXPECT_EQ(whole.status, 200);
  EXPECT_EQ(whole.content_length(), 1000u);
  const Response past = answer({{"Range", "bytes=5000-"}});
  EXPECT_EQ(past.status, 416);
  EXPECT_EQ(past.header("Content-Range"), "bytes */1000");
  EXPECT_EQ(past.header("Content-Type"), "application/json");
  // A client holding another copy gets the whole of this one.
  EXPECT_EQ(answer({{"Range", "bytes=10-19"}, {"If-Range", "\"old\""}}).status, 200);
}

}  // namespace
}  // namespace cudojo::http

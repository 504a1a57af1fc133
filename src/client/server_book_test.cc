// servers.json holds bearer tokens: whatever made it readable by others, reading it makes it the
// owner's alone again, as login writes it.
#include "client/server_book.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace cudojo::client {
namespace {

TEST(ServerBookFile, AFileOthersCanReadIsMadeTheOwnersAlone) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("cudojo-book-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path file = folder / "servers.json";
  std::ofstream(file) << R"({"servers": {"default": {"url": "http://127.0.0.1:1", "token": "secret"}}})";
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  const ServerBook book = ServerBook::load(file);
  ASSERT_TRUE(book.find("default"));
  struct stat status {};
  ASSERT_EQ(stat(file.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace cudojo::client

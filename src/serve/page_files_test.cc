#include "serve/page_files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

namespace cudojo {
namespace {

namespace fs = std::filesystem;

fs::path web_dir() { return fs::path(CUDOJO_COURSE_DIR).parent_path() / "web"; }

std::set<std::string> urls(const PageFileList& list) {
  std::set<std::string> found;
  for (const auto& file : list.files) found.insert(file.url);
  return found;
}

TEST(PageFiles, EveryVendorFileThePageNamesIsServedWithWhatItsStylesheetsLoad) {
  if (!fs::exists(web_dir() / "node_modules"))
    GTEST_SKIP() << "web/node_modules is missing: run scripts/setup.sh";
  const PageFileList list = find_page_files(web_dir());
  EXPECT_TRUE(list.missing.empty()) << list.missing.front();
  const auto served = urls(list);
  std::ifstream in(web_dir() / "index.html");
  const std::string page((std::istreambuf_iterator<char>(in)), {});
  const std::regex reference(R"re((?:src|href)="(/vendor/[^"]+)")re");
  int named = 0;
  for (std::sregex_iterator it(page.begin(), page.end(), reference), end; it != end; ++it, ++named)
    EXPECT_TRUE(served.count((*it)[1])) << (*it)[1];
  EXPECT_GT(named, 5);
  EXPECT_TRUE(served.count("/vendor/katex/fonts/KaTeX_Main-Regular.woff2"));
  for (const char* own :
       {"/index.html", "/js/main.js", "/lesson.js", "/favicon.ico", "/diagrams/tree-fold.svg"})
    EXPECT_TRUE(served.count(own)) << own;
}

TEST(PageFiles, NothingElseOfThePackagesIsServed) {
  if (!fs::exists(web_dir() / "node_modules"))
    GTEST_SKIP() << "web/node_modules is missing: run scripts/setup.sh";
  const auto served = urls(find_page_files(web_dir()));
  for (const auto& url : served) {
    EXPECT_FALSE(url.ends_with(".md")) << url;
    EXPECT_FALSE(url.starts_with("/vendor/") && url.ends_with(".html")) << url;  // no demo pages
    EXPECT_EQ(url.find(".."), std::string::npos) << url;
  }
  EXPECT_FALSE(served.count("/vendor/katex/katex.js"));  // the page loads only the minified one
  EXPECT_FALSE(served.count("/package.json"));
}

TEST(PageFiles, APageThatNamesAFileOutsideItsMountGetsNothingForIt) {
  const fs::path folder = fs::temp_directory_path() / "cudojo_page_files_test";
  fs::remove_all(folder);
  fs::create_directories(folder / "node_modules" / "katex" / "dist");
  std::ofstream(folder / "index.html") << R"(<script src="/vendor/katex/../../../etc/passwd"></script>
<script src="/vendor/other/x.js"></script><link href="/vendor/katex/missing.css">)";
  const PageFileList list = find_page_files(folder);
  const auto served = urls(list);
  EXPECT_FALSE(served.count("/vendor/katex/../../../etc/passwd"));
  EXPECT_FALSE(served.count("/vendor/other/x.js"));
  EXPECT_TRUE(std::any_of(list.missing.begin(), list.missing.end(), [](const std::string& line) {
    return line.find("missing.css") != std::string::npos;
  }));
  fs::remove_all(folder);
}

TEST(PageFiles, ThePagesModulesAreServedButNotLinksOrOddNames) {
  const fs::path folder = fs::temp_directory_path() / "cudojo_page_modules_test";
  fs::remove_all(folder);
  fs::create_directories(folder / "js" / "staff");
  std::ofstream(folder / "index.html") << "<script type=\"module\" src=\"/js/main.js\"></script>";
  std::ofstream(folder / "js" / "main.js") << "import './staff/grid.js';";
  std::ofstream(folder / "js" / "staff" / "grid.js") << "export {};";
  std::ofstream(folder / "js" / "notes.txt") << "not a module";
  std::ofstream(folder / "js" / "Odd Name.js") << "export {};";
  std::ofstream(folder / "secret.js") << "outside js/";
  fs::create_symlink(folder / "secret.js", folder / "js" / "linked.js");
  const auto served = urls(find_page_files(folder));
  EXPECT_TRUE(served.count("/js/main.js"));
  EXPECT_TRUE(served.count("/js/staff/grid.js"));
  EXPECT_FALSE(served.count("/js/notes.txt"));
  EXPECT_FALSE(served.count("/js/Odd Name.js"));
  EXPECT_FALSE(served.count("/js/linked.js"));
  EXPECT_FALSE(served.count("/secret.js"));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace cudojo

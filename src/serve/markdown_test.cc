#include "serve/markdown.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

TEST(Markdown, RendersTheLessonsConstructs) {
  const std::string html = markdown_to_html("# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n");
  EXPECT_NE(html.find("<h1>Title</h1>"), std::string::npos);
  EXPECT_NE(html.find("<strong>bold</strong>"), std::string::npos);
  EXPECT_NE(html.find("<code>code</code>"), std::string::npos);
  EXPECT_NE(html.find("<li>one</li>"), std::string::npos);
}

TEST(Markdown, TablesRenderAsTables) {
  const std::string html = markdown_to_html("| strategy | runs |\n|---|---|\n| `two_pass` | 1 |\n");
  EXPECT_NE(html.find("<table>"), std::string::npos) << html;
  EXPECT_NE(html.find("<th>strategy</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td><code>two_pass</code></td>"), std::string::npos) << html;
}

TEST(Markdown, RawHtmlIsDropped) {
  const std::string html = markdown_to_html("hi <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n");
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("onerror"), std::string::npos);
}

}  // namespace
}  // namespace cudojo

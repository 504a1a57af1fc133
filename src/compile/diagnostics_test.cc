// The text helpers every diagnostic passes through (compile/utf8.h): what reaches a report is valid
// UTF-8 whatever the learner's bytes, and is cut only between characters.
#include <gtest/gtest.h>

#include "compile/utf8.h"

namespace cudojo {
namespace {

TEST(Diagnostics, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(valid_utf8("caf\xE9"), "caf\xEF\xBF\xBD");                            // Latin-1
  EXPECT_EQ(valid_utf8("caf\xC3\xA9"), "caf\xC3\xA9");                            // already UTF-8
  EXPECT_EQ(valid_utf8("\xC3"), "\xEF\xBF\xBD");                                  // cut short
  EXPECT_EQ(valid_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(valid_utf8("\xF0\x9F\x98\x80!"), "\xF0\x9F\x98\x80!");                // four bytes
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(Diagnostics, CutsFallBetweenCharacters) {
  const std::string text = "ab\xC3\xA9\xE2\x82\xAC";  // a b é €
  EXPECT_EQ(utf8_prefix(text, 2), "ab");
  EXPECT_EQ(utf8_prefix(text, 3), "ab");
  EXPECT_EQ(utf8_prefix(text, 4), "ab\xC3\xA9");
  EXPECT_EQ(utf8_prefix(text, 5), "ab\xC3\xA9");
  EXPECT_EQ(utf8_prefix(text, 6), "ab\xC3\xA9");
  EXPECT_EQ(utf8_prefix(text, 7), text);
  EXPECT_EQ(utf8_prefix(text, 100), text);
  for (std::size_t limit = 0; limit <= text.size(); ++limit) {
    const std::string_view cut = utf8_prefix(text, limit);
    EXPECT_EQ(valid_utf8(cut), cut) << limit;
  }
}

TEST(Diagnostics, ColumnsCountCharacters) {
  const std::string line = "\t/* \xC3\xA9 */ x";
  EXPECT_EQ(utf8_column(line, 0), 1);
  EXPECT_EQ(utf8_column(line, 1), 2);
  EXPECT_EQ(utf8_column(line, 4), 5);    // the é
  EXPECT_EQ(utf8_column(line, 5), 5);    // its second byte: still the é
  EXPECT_EQ(utf8_column(line, 10), 10);  // the x
}

}  // namespace
}  // namespace cudojo

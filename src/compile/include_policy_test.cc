#include "compile/include_policy.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

IncludeScan scan(const std::string& source) { return scan_includes(source); }

TEST(IncludePolicy, AllowsTheHeadersLearnersWrite) {
  auto result = scan(
      "#include <cstdio>\n#include <stdio.h>\n#include <cuda_runtime.h>\n"
      "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
      "#include <cuda/std/cstdint>\n#include <cub/block/block_reduce.cuh>\n"
      "#  include \"cstdint\"  // comment\n");
  EXPECT_TRUE(result.ok()) << result.refused.front().reason;
  EXPECT_EQ(result.allowed.size(), 8u);
}

TEST(IncludePolicy, RefusesHostFilesWithTheLine) {
  auto result = scan("// ok\n#include \"/etc/passwd\"\n");
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.refused[0].line, 2);
  EXPECT_NE(result.refused[0].reason.find("/etc/passwd"), std::string::npos);
}

TEST(IncludePolicy, RefusesRelativeEscapesAndUnknownHeaders) {
  EXPECT_FALSE(scan("#include \"../secret.h\"\n").ok());
  EXPECT_FALSE(scan("#include <cuda/std/../../../../etc/passwd>\n").ok());
  EXPECT_FALSE(scan("#include \"mine.h\"\n").ok());
  EXPECT_FALSE(scan("#include <fstream>\n").ok());
  EXPECT_FALSE(scan("#include <cudnn.h>\n").ok());
}

TEST(IncludePolicy, RefusesComputedIncludes) {
  auto result = scan("#define F \"/etc/passwd\"\n#include F\n");
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.refused[0].line, 2);
  EXPECT_FALSE(scan("#include_next <cstdio>\n").ok());
  EXPECT_FALSE(scan("#embed \"/etc/passwd\"\n").ok());
  EXPECT_FALSE(scan("#line 1 \"/etc/passwd\"\n").ok());
}

TEST(IncludePolicy, FindsDirectivesHiddenBySplicesCommentsAndDigraphs) {
  EXPECT_FALSE(scan("#inc\\\nlude \"/etc/passwd\"\n").ok());
  EXPECT_FALSE(scan("/* a */ # /* b */ include \"/etc/passwd\"\n").ok());
  EXPECT_FALSE(scan("%:include \"/etc/passwd\"\n").ok());
  EXPECT_FALSE(scan("/* spans\n lines */ #include \"/etc/passwd\"\n").ok());
  EXPECT_FALSE(scan("?"
                    "?=include \"/etc/passwd\"\n")
                   .ok());  // a trigraph, spelled so g++ leaves it
}

TEST(IncludePolicy, DigitSeparatorDoesNotOpenACharacterLiteral) {
  // The scanner must not read '0'/*' as a character literal followed by a comment opener, which
  // would hide the next line's directive from it while the compiler obeys it.
  auto result = scan("int x = 1'0'/*';\n#include \"/etc/passwd\"\n// */\n");
  EXPECT_FALSE(result.ok());
}

TEST(IncludePolicy, RawStringsAreSkippedWhole) {
  // The raw string holds '" /*': a scanner that ended the string at the first quote would think a
  // comment starts there and miss the directive on the next line.
  auto result = scan("const char* s = R\"x( \" /* )x\";\n#include \"/etc/passwd\"\n// */\n");
  EXPECT_FALSE(result.ok());
  // And a directive inside a raw string is text, not a directive.
  EXPECT_TRUE(scan("const char* s = R\"(\n#include \"/etc/passwd\"\n)\";\n").ok());
}

TEST(IncludePolicy, DirectiveTextInsideCommentsAndStringsIsIgnored) {
  EXPECT_TRUE(scan("// #include \"/etc/passwd\"\n").ok());
  EXPECT_TRUE(scan("/*\n#include \"/etc/passwd\"\n*/\n").ok());
  EXPECT_TRUE(scan("const char* s = \"#include </etc/passwd>\";\n").ok());
  EXPECT_TRUE(scan("int a = 1; # define X 1\n").ok());  // not at line start: not a directive at all
}

TEST(IncludePolicy, HeaderNamesAreCheckedCharacterByCharacter) {
  EXPECT_TRUE(header_allowed("cub/cub.cuh"));
  EXPECT_FALSE(header_allowed("cub//cub.cuh"));
  EXPECT_FALSE(header_allowed("cub/cub.cuh\t"));
  EXPECT_FALSE(header_allowed(""));
  EXPECT_FALSE(header_allowed(".hidden"));
}

}  // namespace
}  // namespace cudojo

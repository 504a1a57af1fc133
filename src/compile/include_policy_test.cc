#include "compile/include_policy.h"

#include <gtest/gtest.h>

#include <algorithm>

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
  EXPECT_TRUE(header_allowed("cub/block/block_reduce.cuh"));
  EXPECT_FALSE(header_allowed("cub//block/block_reduce.cuh"));
  EXPECT_FALSE(header_allowed("cub/cub.cuh\t"));
  EXPECT_FALSE(header_allowed(""));
  EXPECT_FALSE(header_allowed(".hidden"));
}

TEST(IncludePolicy, CubHeadersThatNeedTheHostAreRefusedNamingThoseThatWork) {
  // <cub/cub.cuh> compiles for seconds and fails with `cannot open source file "iterator"`.
  for (const std::string& header :
       {"cub/cub.cuh", "cub/device/device_reduce.cuh", "cub/util_allocator.cuh"}) {
    auto result = scan("// one\n#include <" + header + ">\n");
    ASSERT_EQ(result.refused.size(), 1u) << header;
    EXPECT_EQ(result.refused[0].line, 2);
    EXPECT_NE(result.refused[0].reason.find("<cub/block/block_reduce.cuh>"), std::string::npos)
        << result.refused[0].reason;
  }
  EXPECT_TRUE(scan("#include <cub/block/block_reduce.cuh>\n#include <cub/warp/warp_reduce.cuh>\n").ok());
}

TEST(IncludePolicy, TheAllowedHeadersAreData) {
  const auto table = allowed_headers();
  const auto row = [&](std::string_view name) {
    return std::find_if(table.begin(), table.end(), [&](const AllowedHeader& h) { return h.name == name; });
  };
  ASSERT_NE(row("cub/block/"), table.end());
  EXPECT_EQ(row("cub/block/")->kind, "cuda");
  EXPECT_EQ(row("cub/cub.cuh")->kind, "refused");
  for (const auto& shim : shim_headers()) {
    ASSERT_NE(row(shim.name), table.end()) << shim.name;
    EXPECT_EQ(row(shim.name)->kind, "shim");
    EXPECT_TRUE(header_allowed(shim.name));
  }
  for (const auto& header : table) {
    if (header.name.ends_with('/')) continue;
    EXPECT_EQ(header_allowed(header.name), header.kind != "refused") << header.name;
  }
  const std::string text = allowed_headers_text();
  EXPECT_NE(text.find("<cstdio>"), std::string::npos);
  EXPECT_NE(text.find("<cub/block/...>"), std::string::npos);
  EXPECT_NE(text.find("<cub/cub.cuh>"), std::string::npos);
}

TEST(IncludePolicy, HasIncludeOnlyWithAnAllowedHeaderNamedDirectly) {
  EXPECT_TRUE(scan("#if __has_include(<cub/block/block_reduce.cuh>)\n#endif\n").ok());
  EXPECT_TRUE(scan("#if __has_include( \"cstdio\" ) && 1\n#endif\n").ok());
  for (const std::string& source : {
           "#if __has_include(\"/etc/shadow\")\n#error yes\n#endif\n",
           "#if __has_include(<../../etc/shadow>)\n#endif\n",
           "#if __has_include(\"cub/../../../../etc/shadow\")\n#endif\n",
           "#define F \"/etc/shadow\"\n#if __has_include(F)\n#endif\n",
           "#define H __has_include\n#if H(\"/etc/shadow\")\n#endif\n",
           "#define H(x) __has_include(x)\n",
           "#define CAT(a, b) a##b\n#if CAT(__has_, include)(\"/etc/shadow\")\n#endif\n",
           "#define CAT(a, b, c) a##b##c\n#if CAT(_, _has, _include)(\"/etc/shadow\")\n#endif\n",
           "#if _CCCL_HAS_INCLUDE(\"/etc/shadow\")\n#endif\n",
           "#if __has_include_next(<cstdio>)\n#endif\n",
           "#ifdef __has_include\n#endif\n",
           "#if __has_\\\ninclude(\"/etc/shadow\")\n#endif\n",
       }) {
    EXPECT_FALSE(scan(source).ok()) << source;
  }
  // Words that merely resemble it are fine.
  EXPECT_TRUE(scan("__device__ __half h; int __shfl_total; int _x; // __has_include(\"/etc\")\n").ok());
}

TEST(IncludePolicy, TrigraphsAreTextInCommentsAndLiterals) {
  EXPECT_TRUE(scan("// why?"
                   "?= and ?"
                   "?/\n")
                  .ok());
  EXPECT_TRUE(scan("/* ?"
                   "?= */ const char* s = \"?"
                   "?/\"; char c = '?';\n")
                  .ok());
  auto refused = scan(
      "int a; ?"
      "?=define X\n");
  ASSERT_EQ(refused.refused.size(), 1u);
  EXPECT_EQ(refused.refused[0].line, 1);
}

TEST(IncludePolicy, TheRefusedExcerptStartsAtTheDirective) {
  auto digraph = scan("%:include \"/etc/passwd\"\n");
  ASSERT_EQ(digraph.refused.size(), 1u);
  EXPECT_EQ(digraph.refused[0].text, "%:include \"/etc/passwd\"");
  auto hash = scan("  #  include \"/etc/passwd\"\r\n");
  ASSERT_EQ(hash.refused.size(), 1u);
  EXPECT_EQ(hash.refused[0].text, "#  include \"/etc/passwd\"");
}

TEST(IncludePolicy, AByteOrderMarkDoesNotHideADirective) {
  auto result = scan("\xEF\xBB\xBF#include \"/etc/passwd\"\n");
  ASSERT_EQ(result.refused.size(), 1u);
  EXPECT_EQ(result.refused[0].line, 1);
  EXPECT_EQ(without_byte_order_mark("\xEF\xBB\xBFint x;"), "int x;");
  EXPECT_EQ(without_byte_order_mark("int x;"), "int x;");
}

TEST(IncludePolicy, QuotedHeaderNamesAreCompiledAngled) {
  const std::string source =
      "#include \"cstdint\"\n#include <cstdio>\n#if __has_include(\"cuda/std/limits\")\n#endif\n"
      "#inc\\\nlude \"cfloat\"\nconst char* s = \"#include \\\"x\\\"\";\n";
  auto result = scan(source);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(angled_includes(source, result),
            "#include <cstdint>\n#include <cstdio>\n#if __has_include(<cuda/std/limits>)\n#endif\n"
            "#inc\\\nlude <cfloat>\nconst char* s = \"#include \\\"x\\\"\";\n");
  ASSERT_EQ(result.includes.size(), 3u);
  EXPECT_EQ(result.includes[2].line, 5);
  EXPECT_EQ(result.includes[2].name, "cfloat");
}

}  // namespace
}  // namespace cudojo

// lesson_text.h: every construct the shipped lessons use, turned into terminal text, and every
// shipped lesson left with no TeX, no math delimiter, no diagram fence and no unfilled figure.
#include "cli/lesson_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "cli/show_command.h"
#include "serve/server.h"
#include "stage/stage.h"

namespace cudojo::cli {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the page draws and a terminal cannot, left in `text` outside its code (fences, `spans`):
// one entry per finding, empty when the text is plain.
std::vector<std::string> page_only_leftovers(const std::string& text) {
  std::string prose;
  std::istringstream lines(text);
  bool in_code = false, in_diagram = false;
  for (std::string line; std::getline(lines, line);) {
    const std::size_t start = line.find_first_not_of(' ');
    const bool marker = start != std::string::npos && line.compare(start, 3, "```") == 0;
    if (marker && !in_code && line.compare(start, 10, "```diagram") == 0) {
      prose += line + "\n";  // a diagram fence is itself a leftover
      in_diagram = true;
    } else if (marker && in_diagram) {
      in_diagram = false;
    } else if (marker) {
      in_code = !in_code;
    } else if (!in_code && !in_diagram) {
      prose += std::regex_replace(line, std::regex("`[^`]*`"), "") + "\n";
    }
  }
  std::vector<std::string> found;
  static const std::pair<const char*, const char*> patterns[] = {
      {R"(\\[A-Za-z]+)", "a TeX command"},  {R"(\\.)", "a backslash"},
      {R"(\$)", "a $ math delimiter"},      {R"(```diagram)", "a diagram fence"},
      {R"(\{\{[^}]*\}\})", "a {{figure}}"},
  };
  for (const auto& [pattern, what] : patterns) {
    std::smatch match;
    if (std::regex_search(prose, match, std::regex(pattern)))
      found.push_back(std::string(what) + ": " + match.str());
  }
  return found;
}

std::vector<fs::path> shipped_lessons() {
  std::vector<fs::path> lessons;
  for (const auto& entry : fs::recursive_directory_iterator(default_course_root())) {
    if (entry.path().filename() == "lesson.md") lessons.push_back(entry.path());
  }
  std::sort(lessons.begin(), lessons.end());
  return lessons;
}

TEST(LessonText, MathBecomesReadableUnicode) {
  const std::pair<const char*, const char*> cases[] = {
      {"2^{22}", "2^22"},
      {"2^{-23}", "2^-23"},
      {"x^{n+1}", "x^(n+1)"},
      {"x_i", "x_i"},
      {"a \\times b", "a × b"},
      {"4 \\cdot K", "4 · K"},
      {"x \\le y \\ge z", "x ≤ y ≥ z"},
      {"t \\approx 2", "t ≈ 2"},
      {"1, 2, \\ldots, n", "1, 2, …, n"},
      {"\\frac{a}{b}", "a/b"},
      {"\\frac{a+b}{c}", "(a+b)/c"},
      {"\\frac{1}{2^{k}}", "1/2^k"},
      {"\\text{x}", "x"},
      {"\\mathrm{got}", "got"},
      {"\\sqrt{K}", "√K"},
      {"\\sqrt{a+b}", "√(a+b)"},
      {"\\sum_{i=1}^{K} \\lvert x_i \\rvert", "Σ[i=1..K] |x_i|"},
      {"\\text{\\% of peak}", "% of peak"},
      {"\\left( a \\right)", "( a )"},
      {"\\unknown", "unknown"},
      // reduction/2's tolerance, reduction/6's bandwidth and % of peak, reduction/8's error bound:
      {"\\lvert \\mathrm{got} - \\mathrm{ref} \\rvert \\le 4 \\cdot 2^{-23} \\cdot \\sqrt{K} \\cdot "
       "\\sum_{i=1}^{K} \\lvert x_i \\rvert",
       "|got - ref| ≤ 4 · 2^-23 · √K · Σ[i=1..K] |x_i|"},
      {"\\text{bandwidth} = \\frac{\\text{bytes read}}{\\text{median time}}",
       "bandwidth = bytes read / median time"},
      {"\\text{\\% of peak} = 100 \\cdot \\frac{\\text{bandwidth}}{\\text{peak read bandwidth}}",
       "% of peak = 100 · bandwidth / peak read bandwidth"},
      {"\\frac{\\lvert \\mathrm{got} - \\mathrm{exact} \\rvert}{\\lvert \\mathrm{exact} \\rvert} \\le "
       "10^{-4}",
       "|got - exact| / |exact| ≤ 10^-4"},
  };
  for (const auto& [tex, text] : cases) EXPECT_EQ(math_to_text(tex), text) << tex;
}

TEST(LessonText, DisplayMathStandsOnItsOwnIndentedLine) {
  EXPECT_EQ(lesson_to_text("The rule:\n\n$$x \\le 2^{22}$$\n\nThen.\n"),
            "The rule:\n\n    x ≤ 2^22\n\nThen.\n");
  // In a list item, indented past the item.
  EXPECT_EQ(lesson_to_text("- Bound:\n\n  $$a \\times b$$\n"), "- Bound:\n\n      a × b\n");
  // Inside a sentence: the formula gets its own line all the same.
  EXPECT_EQ(lesson_to_text("so $$2^{10}$$ holds\n"), "so\n    2^10\nholds\n");
}

TEST(LessonText, InlineMathAndMarkdownEscapesReadAsThePageShowsThem) {
  // In markdown, inline math is \\( ... \\) and \\% reaches TeX as \%.
  EXPECT_EQ(lesson_to_text("at \\\\(2^{26}\\\\) floats, \\\\(\\text{\\\\% of peak}\\\\)\n"),
            "at 2^26 floats, % of peak\n");
  EXPECT_EQ(lesson_to_text("a\\_b and 2\\*3\n"), "a_b and 2*3\n");
}

TEST(LessonText, CodeIsLeftExactlyAsWritten) {
  const std::string code =
      "Use `s[threadIdx.x]` and `$$x$$`:\n\n```cuda\nprintf(\"%d\\n\", x);  // $$ \\frac\n```\n";
  EXPECT_EQ(lesson_to_text(code), code);
  const std::string long_fence = "````\n```diagram\ntree\n```\n````\n";
  EXPECT_EQ(lesson_to_text(long_fence), long_fence);
}

TEST(LessonText, ADiagramFenceBecomesItsDescriptionOrANote) {
  const std::string lesson = "Fold:\n\n```diagram\ntree-fold\n```\n\nDone.\n";
  EXPECT_EQ(lesson_to_text(lesson),
            "Fold:\n\n(diagram 'tree-fold': drawn on the lesson's web page)\n\nDone.\n");
  const DiagramLookup lookup = [](const std::string& name) -> std::optional<DiagramText> {
    if (name != "tree-fold") return std::nullopt;
    return DiagramText{"Block tree fold", "Eight slots folded in three steps."};
  };
  EXPECT_EQ(lesson_to_text(lesson, lookup),
            "Fold:\n\nDiagram: Block tree fold (drawn on the lesson's web page)\n"
            "  Eight slots folded in three steps.\n\nDone.\n");
}

TEST(LessonText, AnUnfilledFigureSaysSoInsteadOfShowingBraces) {
  EXPECT_EQ(lesson_to_text("a median of {{ref.median_ms}} ms\n"),
            "a median of (ref.median_ms: no figure) ms\n");
}

TEST(LessonText, SvgTitleAndDescriptionAreTheDiagramsText) {
  const auto text = svg_diagram_text(
      "<svg><title id=\"title\">Warp fold</title>\n<desc id=\"desc\">Lane i adds\n  lane i + 16 &amp; "
      "so on &lt;5 rounds&gt;.</desc><g/></svg>");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->title, "Warp fold");
  EXPECT_EQ(text->description, "Lane i adds lane i + 16 & so on <5 rounds>.");
  EXPECT_FALSE(svg_diagram_text("<svg><g/></svg>"));
}

TEST(LessonText, TheCheckFindsWhatTheShippedLessonsWouldShowRaw) {
  // Without the converter the shipped lessons do show TeX, $$ and diagram fences: the check bites.
  std::string all;
  for (const auto& lesson : shipped_lessons()) all += read_file(lesson);
  const auto found = page_only_leftovers(all);
  EXPECT_GE(found.size(), 4u) << ::testing::PrintToString(found);
}

TEST(LessonText, EveryShippedLessonConvertsToPlainText) {
  const auto lessons = shipped_lessons();
  EXPECT_GE(lessons.size(), 12u);
  for (const auto& lesson : lessons) {
    const auto found = page_only_leftovers(lesson_to_text(read_file(lesson)));
    EXPECT_TRUE(found.empty()) << lesson << ": " << ::testing::PrintToString(found);
  }
}

TEST(LessonText, ShowPrintsEveryStagesLessonWithFiguresAndDiagramsInWords) {
  const Course course = load_course_report(default_course_root());
  ASSERT_GE(course.stages.size(), 12u);
  for (const Stage& stage : course.stages) {
    const std::string text = show_lesson_text(stage, default_course_root(), default_web_dir());
    const auto found = page_only_leftovers(text);
    EXPECT_TRUE(found.empty()) << stage.id << ": " << ::testing::PrintToString(found);
    EXPECT_EQ(text.find("(diagram '"), std::string::npos) << stage.id << ": a diagram without its SVG's text";
    if (stage.id == "reduction/3") {
      EXPECT_NE(text.find("Diagram: Block tree fold in shared memory"), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace cudojo::cli

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

// A stage on a fixed grid whose lesson quotes its calibrated figures.
Stage grid_stage(const std::string& lesson) {
  Stage stage;
  stage.id = "reduction/6";
  stage.performance_size = 67108864;
  stage.launch.threads_per_block = 256;
  stage.launch.blocks_per_sm = 4;
  stage.lesson_markdown = lesson;
  return stage;
}

nlohmann::json calibration(const std::string& gpu, double median_ms, double peak, std::int64_t n = 67108864) {
  return {
      {"gpu", gpu},
      {"measured_at", "2026-11-30 13:25:49 UTC"},
      {"peak_read_gbps", peak},
      {"stages",
       {{"reduction/6",
         {{"n", n},
          {"bandwidth_gbps", 4256.016},
          {"reference_time_ms", {{"median", median_ms}, {"min", 0.0616}, {"max", 0.0637}, {"samples", 20}}},
          {"baseline_time_ms", {{"median", 0.06536}}}}}}}};
}

constexpr const char* kLesson =
    "# Memory speed\n\n{{grid.blocks}} blocks on the {{gpu}}'s {{gpu.sm_count}} SMs, {{grid.threads}} "
    "threads; {{ref.median_ms}} ms, {{ref.gbps}} GB/s, {{ref.pct_of_peak}}% of {{gpu.peak_read_gbps}}; "
    "floor {{ref.bytes}} bytes = {{ref.floor_ms}} ms; CUB {{baseline.median_ms}} ms.\n";

TEST(LessonFigures, ComeFromTheJudgingGpusCalibrationAndSaySo) {
  const nlohmann::json t4 = calibration("Tesla T4", 0.9512, 280.4);
  const nlohmann::json h200 = calibration("NVIDIA H200", 0.063072, 4462.6188);
  const LessonFigures figures = fill_lesson_figures(grid_stage(kLesson), {"Tesla T4", &t4, &h200});
  EXPECT_EQ(figures.gpu, "Tesla T4");
  EXPECT_FALSE(figures.example);
  EXPECT_NE(figures.markdown.find("160 blocks on the Tesla T4's 40 SMs, 40,960 threads; 0.951 ms"),
            std::string::npos)
      << figures.markdown;
  EXPECT_NE(
      figures.markdown.find("# Memory speed\n\n> *Figures in this lesson are from this server's Tesla T4, "
                            "calibrated on 2026-11-30.*\n\n160 blocks"),
      std::string::npos)
      << figures.markdown;
}

TEST(LessonFigures, FallBackToTheH200AsAnExampleAndSayWhy) {
  const nlohmann::json h200 = calibration("NVIDIA H200", 0.063072, 4462.6188);
  const LessonFigures figures = fill_lesson_figures(grid_stage(kLesson), {"NVIDIA L4", nullptr, &h200});
  EXPECT_TRUE(figures.example);
  EXPECT_NE(
      figures.markdown.find("528 blocks on the NVIDIA H200's 132 SMs, 135,168 threads; 0.0631 ms, 4256 GB/s, "
                            "95.4% of 4463; floor 268,435,456 bytes = 0.0602 ms; CUB 0.0654 ms."),
      std::string::npos)
      << figures.markdown;
  EXPECT_NE(
      figures.note.find("from the NVIDIA H200, calibrated on 2026-11-30, as an example: this server judges "
                        "on the NVIDIA L4, which has not been calibrated yet."),
      std::string::npos)
      << figures.note;
  // No GPU judges here; `cudojo show`, outside any server, just says "as an example".
  EXPECT_NE(fill_lesson_figures(grid_stage(kLesson), {"", nullptr, &h200})
                .note.find("no GPU judges on this server"),
            std::string::npos);
  EXPECT_NE(
      fill_lesson_figures(grid_stage(kLesson), {std::nullopt, nullptr, &h200}).note.find("as an example.*"),
      std::string::npos);
}

TEST(LessonFigures, AStageMeasuredAtAnotherSizeIsNotQuoted) {
  const nlohmann::json old_t4 = calibration("Tesla T4", 0.9512, 280.4, /*n=*/1 << 20);
  const nlohmann::json h200 = calibration("NVIDIA H200", 0.063072, 4462.6188);
  const LessonFigures figures = fill_lesson_figures(grid_stage(kLesson), {"Tesla T4", &old_t4, &h200});
  EXPECT_TRUE(figures.example);
  EXPECT_NE(figures.note.find("whose calibration does not cover this stage"), std::string::npos)
      << figures.note;
}

TEST(LessonFigures, WithoutAnyCalibrationTheLessonSaysSoAndUnknownNamesStay) {
  const LessonFigures figures =
      fill_lesson_figures(grid_stage("# T\n\n{{ref.median_ms}} and {{ref.typo}}\n"), {"", nullptr, nullptr});
  EXPECT_TRUE(figures.gpu.empty());
  EXPECT_NE(figures.markdown.find("(not calibrated) and {{ref.typo}}"), std::string::npos)
      << figures.markdown;
  EXPECT_TRUE(is_lesson_figure_name("ref.median_ms"));
  EXPECT_FALSE(is_lesson_figure_name("ref.typo"));
}

TEST(LessonFigures, ALessonWithoutPlaceholdersIsLeftAlone) {
  const LessonFigures figures =
      fill_lesson_figures(grid_stage("# T\n\nNo figures.\n"), {"", nullptr, nullptr});
  EXPECT_EQ(figures.markdown, "# T\n\nNo figures.\n");
  EXPECT_TRUE(figures.note.empty());
}

}  // namespace
}  // namespace cudojo

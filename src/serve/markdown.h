// Lessons as the page shows them: lesson.md with its figures filled in, rendered to HTML by
// cmark-gfm. Raw HTML in the source is dropped (cmark's safe mode), so a lesson cannot inject
// script into the page.
//
// A lesson's measured figures are placeholders, `{{ref.median_ms}}`, filled from the calibration
// (calibration/<gpu-slug>.json, `cudojo calibrate`) of the GPU that judges on this server, so a
// class judged on a T4 reads the T4's times, not the H200's. When that GPU has no calibration for
// the stage (or none at all), the lesson shows the H200's, as an example; either way a note under
// the lesson's title says which GPU the figures are from. docs/stages.md lists the placeholders.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "stage/lesson_figure_names.h"
#include "stage/stage.h"

namespace cudojo {

std::string markdown_to_html(const std::string& markdown);

// The calibration the lessons fall back on when the judging GPU has none: shipped in calibration/.
inline constexpr const char* kExampleCalibrationGpu = "NVIDIA H200";

// Where a lesson's figures may come from. The calibrations are parsed calibration files, null
// when there is none.
struct LessonFigureSources {
  // The GPU that judges this reader's runs: nullopt outside a server (`cudojo show`), "" on a
  // server where no GPU judges.
  std::optional<std::string> judging_gpu;
  const nlohmann::json* judging_calibration = nullptr;
  const nlohmann::json* example_calibration = nullptr;  // kExampleCalibrationGpu's
};

// Which GPU's figures a lesson shows, and the sentence that says so (empty for a lesson without
// placeholders).
struct LessonFigures {
  std::string markdown;       // the lesson with every known placeholder filled and the note added
  std::string gpu;            // whose figures: "NVIDIA H200"; empty when none could be filled
  std::string calibrated_on;  // "2026-11-30"
  bool example = false;       // the figures are not the judging GPU's
  std::string note;           // "Figures in this lesson are from ..."
};

LessonFigures fill_lesson_figures(const Stage& stage, const LessonFigureSources& sources);

// The placeholders a lesson may use are stage/lesson_figure_names.h's; `cudojo course check`
// reports any other `{{...}}`.

}  // namespace cudojo

// `cudojo show STAGE`: the stage for a terminal reader. The lesson as plain text (lesson_text.h:
// math in Unicode, diagrams as their descriptions, figures from the example calibration), then the
// kernel's signature, the launch, what the driver checks, the tests and the gate, with ratios
// written as the README writes them (0.55x, 2x). --json gives the server's /api/stages/ID object.
#pragma once

#include <filesystem>
#include <string>

#include "stage/language.h"
#include "stage/stage.h"

namespace cudojo::cli {

int cmd_show(const Stage& stage, Language language, const std::filesystem::path& course_dir, bool json);

// The lesson of `stage` as `show` prints it, figures filled from the example calibration under
// `course_dir` and diagrams described from `web_dir`/diagrams.
std::string show_lesson_text(const Stage& stage, const std::filesystem::path& course_dir,
                             const std::filesystem::path& web_dir);

}  // namespace cudojo::cli

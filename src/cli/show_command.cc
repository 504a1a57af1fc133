#include "cli/show_command.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/lesson_text.h"
#include "common/json_text.h"
#include "compile/include_policy.h"
#include "gate/calibration.h"
#include "serve/markdown.h"
#include "serve/server.h"
#include "stage/contract_info.h"
#include "stage/stage_json.h"

namespace cudojo::cli {

namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// course/languages/<language>.md: how kernels look in that language, the names it offers, and what
// the judge refuses.
std::string language_notes(const std::filesystem::path& course_dir, Language language) {
  return read_text(course_dir / "languages" / (std::string(to_string(language)) + ".md"));
}

// The lesson with its figures from the example calibration: `cudojo show` runs no GPU, so it
// cannot say which GPU will judge (the server fills them from its own; serve/markdown.h).
std::string lesson_with_example_figures(const Stage& stage, const std::filesystem::path& course_dir) {
  const std::filesystem::path file =
      default_calibration_dir(course_dir) / (gpu_slug(kExampleCalibrationGpu) + ".json");
  std::ifstream in(file);
  const nlohmann::json example = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  LessonFigureSources sources;
  sources.example_calibration = example.is_object() ? &example : nullptr;
  return fill_lesson_figures(stage, sources).markdown;
}

}  // namespace

std::string show_lesson_text(const Stage& stage, const std::filesystem::path& course_dir,
                             const std::filesystem::path& web_dir) {
  const DiagramLookup diagrams = [&](const std::string& name) -> std::optional<DiagramText> {
    if (name.empty() || name.find_first_of("/\\.") != std::string::npos) return std::nullopt;
    return svg_diagram_text(read_text(web_dir / "diagrams" / (name + ".svg")));
  };
  return lesson_to_text(lesson_with_example_figures(stage, course_dir), diagrams);
}

int cmd_show(const Stage& stage, Language language, const std::filesystem::path& course_dir, bool json) {
  if (json) {
    // The same object the server's /api/stages/ID gives; --lang picks the signature and starter.
    nlohmann::json description = stage_description_json(stage);
    description["lesson_markdown"] = lesson_with_example_figures(stage, course_dir);
    description["signature"] = describe_signature(stage, language);
    if (const std::string* starter = stage.starter(language)) description["starter"] = *starter;
    std::cout << json_text(description, 2) << "\n";
    return 0;
  }
  const std::string extension(source_extension(language));
  std::cout << fmt::format("{}  ({})  {}\n\n", stage.id, stage.slug_id(), stage.title);
  std::cout << show_lesson_text(stage, course_dir, default_web_dir()) << "\n";
  std::cout << fmt::format("## The kernel you write ({})\n\n    {}\n\n", display_name(language),
                           describe_signature(stage, language));
  std::cout << "## Launch\n\n    " << describe_launch(stage) << "\n\n";
  std::cout << "## What the driver checks\n\n" << find_contract_info(stage.contract)->driver << "\n";
  std::cout << "\n" << describe_tests(stage) << "\n";
  std::cout << "\n## Gate\n\n    " << describe_gate(stage) << "\n\n";
  if (language == Language::kCuda)
    std::cout << "## Headers you may include\n\n" << allowed_headers_text() << "\n";
  if (language != Language::kCuda) {
    const std::string notes = language_notes(course_dir, language);
    if (!notes.empty()) std::cout << notes << "\n";
  }
  const std::string lang_flag =
      language == Language::kCuda ? "" : fmt::format(" --lang {}", to_string(language));
  std::cout << fmt::format("Start with:  cudojo starter {}{} > mine{} && cudojo check {} mine{}\n", stage.id,
                           lang_flag, extension, stage.id, extension);
  std::cout << "Other languages: --lang cuda | python | rust\n";
  return 0;
}

}  // namespace cudojo::cli

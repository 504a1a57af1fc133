// The figures a lesson may quote from a calibration, as `{{name}}` placeholders (docs/stages.md,
// "Figures in a lesson"): their names and how a placeholder is written. Here, below the server
// that fills them (serve/markdown.h) and the course check that refuses a name it would not fill.
#pragma once

#include <regex>
#include <string>
#include <vector>

namespace cudojo {

// Every name a placeholder may use, in the order docs/stages.md lists them.
const std::vector<std::string>& lesson_figure_names();

bool is_lesson_figure_name(const std::string& name);

// `{{ name }}`: letters, digits, dots and underscores between double braces; group 1 is the name.
const std::regex& lesson_figure_pattern();

}  // namespace cudojo

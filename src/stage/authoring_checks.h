// What `cudojo course check` looks at in a stage folder besides the stage file and the compiles:
// the lesson as the page will show it, and the places a scaffolded stage still waits for its author.
// Plain functions of text: the renderer (the server's markdown_to_html) and the names of the
// diagrams the page draws are handed in, so this folder needs neither the server nor the page.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stage/stage.h"

namespace cudojo {

// The marker `cudojo stage new` writes wherever the author still has to write something.
inline constexpr std::string_view kAuthorTodo = "TODO(author)";

struct LessonCheck {
  std::filesystem::path file;  // the lesson (its folder resolves relative links)
  // Markdown to the HTML the page inserts (cmark-gfm, safe mode): the server's renderer.
  std::function<std::string(const std::string&)> render;
  // The names a ```diagram fence may give (an SVG in web/diagrams/ with its row in web/lesson.js);
  // nullopt when the page's files were not found, and diagram names go unchecked.
  std::optional<std::set<std::string>> diagrams;
};

// Problems at their lines: code fences without a language or never closed, diagram fences the page
// cannot draw, relative links and images to files that do not exist, math delimiters ($$ ... $$ and
// \\( ... \\)) not closed in their paragraph or split by markdown emphasis; raw HTML (dropped by the
// page) as a warning.
std::vector<StageProblem> check_lesson(const std::string& markdown, const LessonCheck& check);

// Every TODO(author) marker in the files of one folder (not below it), as warnings at their lines.
std::vector<StageProblem> find_author_todos(const std::filesystem::path& directory);

// The diagram names the page under `web_dir` draws; nullopt without web/lesson.js.
std::optional<std::set<std::string>> page_diagrams(const std::filesystem::path& web_dir);

}  // namespace cudojo

// A lesson for the terminal: `cudojo show` prints lesson.md as plain text a reader can follow
// without KaTeX or the page's figures. Markdown stays (headings, lists, code fences and inline code
// read well as they are); what only the page can draw is turned into text:
//   - math, `$$...$$` (display, on its own indented line) and `\\(...\\)` (inline), into Unicode:
//     `2^{22}` -> `2^22`, `\times` -> `×`, `\frac{a+b}{c}` -> `(a+b)/c`, `\text{x}` -> `x`;
//   - a ```diagram fence into the diagram's title and description (from its SVG, through
//     DiagramLookup) or, without one, a line saying the page draws it;
//   - markdown's backslash escapes (`\_`, `\\`) into the character the page shows;
//   - a `{{name}}` figure left unfilled into "(name: no figure)".
// Code (fences and `inline code`) is left exactly as written. Pure functions: no files, no I/O.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cudojo::cli {

// What a diagram shows, in words: the <title> and <desc> of web/diagrams/NAME.svg.
struct DiagramText {
  std::string title;
  std::string description;
};

// The text of the diagram a ```diagram fence names; nullopt when there is none.
using DiagramLookup = std::function<std::optional<DiagramText>(const std::string& name)>;

// One formula's TeX (what KaTeX would be given, without its delimiters) as one line of text.
std::string math_to_text(std::string_view tex);

// A lesson's markdown, its figures already filled, as text for a terminal.
std::string lesson_to_text(std::string_view markdown, const DiagramLookup& diagrams = {});

// The <title> and <desc> of an SVG's text; nullopt when it has neither.
std::optional<DiagramText> svg_diagram_text(std::string_view svg);

}  // namespace cudojo::cli

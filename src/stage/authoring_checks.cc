#include "stage/authoring_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

#include "stage/lesson_figure_names.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

// The line with inline code spans (`...`, ``...``) blanked: math and HTML inside them are code.
std::string without_code_spans(const std::string& line) {
  std::string text = line;
  std::size_t i = 0;
  while ((i = text.find('`', i)) != std::string::npos) {
    std::size_t run = i;
    while (run < text.size() && text[run] == '`') ++run;
    const std::string ticks = text.substr(i, run - i);
    const std::size_t close = text.find(ticks, run);
    if (close == std::string::npos) break;
    std::fill(text.begin() + static_cast<long>(i), text.begin() + static_cast<long>(close + ticks.size()),
              ' ');
    i = close + ticks.size();
  }
  return text;
}

struct Fence {
  int line = 0;  // 1-based
  char marker = '`';
  std::size_t length = 0;
  std::string language;
  std::string body;
  bool closed = false;
};

// Fenced code blocks, and for every line whether it lies inside one.
std::vector<Fence> find_fences(const std::vector<std::string>& lines, std::vector<bool>& in_fence) {
  std::vector<Fence> fences;
  in_fence.assign(lines.size(), false);
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string text = trim(lines[n]);
    const char marker = text.empty() ? '\0' : text[0];
    std::size_t run = 0;
    while (run < text.size() && text[run] == marker) ++run;
    const bool is_fence_line = (marker == '`' || marker == '~') && run >= 3;
    if (!fences.empty() && !fences.back().closed) {
      Fence& open = fences.back();
      in_fence[n] = true;
      if (is_fence_line && marker == open.marker && run >= open.length && trim(text.substr(run)).empty()) {
        open.closed = true;
      } else {
        open.body += lines[n] + "\n";
      }
      continue;
    }
    if (!is_fence_line) continue;
    const std::string info = trim(text.substr(run));
    if (marker == '`' && info.find('`') != std::string::npos) continue;  // ```a``` is an inline code span
    in_fence[n] = true;
    fences.push_back(
        {static_cast<int>(n + 1), marker, run, info.substr(0, info.find_first_of(" \t{")), "", false});
  }
  return fences;
}

// $$ ... $$ and \\( ... \\) (written so in markdown; a single \( is markdown's escape of "(") must
// close in the paragraph that opens them: the page typesets each paragraph's text on its own.
void check_math(const std::vector<std::string>& lines, const std::vector<bool>& in_fence,
                const fs::path& file, std::vector<StageProblem>& problems) {
  enum class Open { kNone, kDisplay, kInline } open = Open::kNone;
  int opened_at = 0;
  auto close_paragraph = [&]() {
    if (open != Open::kNone) {
      problems.push_back(
          {file, opened_at, "",
           fmt::format("{} opens math that its paragraph never closes with {}: the page shows "
                       "the formula as plain text",
                       open == Open::kDisplay ? "$$" : "\\\\(", open == Open::kDisplay ? "$$" : "\\\\)")});
    }
    open = Open::kNone;
  };
  for (std::size_t n = 0; n <= lines.size(); ++n) {
    if (n == lines.size() || in_fence[n] || trim(lines[n]).empty()) {
      close_paragraph();
      continue;
    }
    const std::string text = without_code_spans(lines[n]);
    const int line = static_cast<int>(n + 1);
    bool single_escape = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text.compare(i, 2, "$$") == 0 && open != Open::kInline) {
        open = open == Open::kDisplay ? Open::kNone : Open::kDisplay;
        opened_at = line;
        ++i;
      } else if (text.compare(i, 3, "\\\\(") == 0 && open == Open::kNone) {
        open = Open::kInline;
        opened_at = line;
        i += 2;
      } else if (text.compare(i, 3, "\\\\)") == 0 && open != Open::kDisplay) {
        if (open == Open::kNone) {
          problems.push_back({file, line, "", "\\\\) closes math that was never opened with \\\\("});
        }
        open = Open::kNone;
        i += 2;
      } else if (text.compare(i, 2, "\\\\") == 0) {
        ++i;  // an escaped backslash
      } else if (text.compare(i, 2, "\\(") == 0 && open == Open::kNone) {
        single_escape = true;
      }
    }
    if (single_escape && text.find("\\)") != std::string::npos) {
      problems.push_back(
          {file, line, "",
           "\\( ... \\) is markdown's escape of a parenthesis, so the page shows no math: write "
           "\\\\( ... \\\\) for inline math",
           true});
    }
  }
}

std::string html_unescape(std::string text) {
  for (const auto& [entity, character] : std::vector<std::pair<std::string, std::string>>{
           {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#39;", "'"}, {"&amp;", "&"}}) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1)) {
      text.replace(at, entity.size(), character);
    }
  }
  return text;
}

std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The first line outside code that holds `needle`; 0 when none does.
int line_of(const std::vector<std::string>& lines, const std::vector<bool>& in_fence,
            const std::string& needle) {
  for (std::size_t n = 0; n < lines.size(); ++n) {
    if (!in_fence[n] && lines[n].find(needle) != std::string::npos) return static_cast<int>(n + 1);
  }
  return 0;
}

// Links and images as the page gets them: relative ones must reach a file beside the lesson.
void check_links(const std::string& html, const std::vector<std::string>& lines,
                 const std::vector<bool>& in_fence, const fs::path& file,
                 std::vector<StageProblem>& problems) {
  static const std::regex kTarget(R"re(<(a|img)\s[^>]*?(href|src)="([^"]*)")re");
  static const std::regex kScheme(R"(^[A-Za-z][A-Za-z0-9+.-]*:)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kTarget); it != std::sregex_iterator();
       ++it) {
    const std::string kind = (*it)[1] == "img" ? "image" : "link";
    const std::string target = html_unescape((*it)[3]);
    if (target.empty()) {
      problems.push_back(
          {file, line_of(lines, in_fence, "]()"), "", fmt::format("a {} with no target", kind)});
      continue;
    }
    if (target[0] == '#' || target[0] == '/' || std::regex_search(target, kScheme)) continue;
    const std::string path = percent_decode(target.substr(0, target.find_first_of("?#")));
    if (path.empty()) continue;
    std::error_code error;
    if (fs::exists(file.parent_path() / path, error)) continue;
    int line = line_of(lines, in_fence, "(" + target);
    if (line == 0) line = line_of(lines, in_fence, path);
    problems.push_back({file, line, "",
                        fmt::format("{} to '{}' goes nowhere: {} does not exist", kind, target,
                                    (file.parent_path() / path).lexically_normal().string())});
  }
}

// What markdown emphasis did to math the source check found whole: a formula whose delimiters no
// longer sit in one run of text (an _ or * inside it became <em>) is not typeset.
void check_rendered_math(const std::string& html, const std::vector<std::string>& lines,
                         const std::vector<bool>& in_fence, const fs::path& file,
                         std::vector<StageProblem>& problems) {
  // Code is left alone by the page's typesetting: drop <pre> and <code> elements whole.
  std::string text;
  for (std::size_t at = 0; at < html.size();) {
    const std::size_t pre = html.find("<pre", at), code = html.find("<code", at);
    const std::size_t open = std::min(pre, code);
    if (open == std::string::npos) {
      text += html.substr(at);
      break;
    }
    text += html.substr(at, open - at) + "<>";
    const std::string close = open == pre ? "</pre>" : "</code>";
    const std::size_t end = html.find(close, open);
    at = end == std::string::npos ? html.size() : end + close.size();
  }
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('<', start), text.size());
    const std::string run = html_unescape(text.substr(start, end - start));
    auto count = [&](std::string_view what) {
      int found = 0;
      for (std::size_t at = run.find(what); at != std::string::npos; at = run.find(what, at + what.size()))
        ++found;
      return found;
    };
    const int displays = count("$$");
    const int opens = count("\\(") - count("\\)");
    if (displays % 2 != 0 || opens != 0) {
      const std::size_t at = displays % 2 != 0 ? run.find("$$") : run.find("\\(");
      const std::string snippet = trim(run.substr(at == std::string::npos ? 0 : at, 24));
      const std::string first_line = snippet.substr(0, snippet.find('\n'));
      int line = line_of(lines, in_fence, first_line);
      if (line == 0 && first_line.starts_with("\\(")) line = line_of(lines, in_fence, "\\" + first_line);
      problems.push_back(
          {file, line, "",
           fmt::format("the formula at '{}' is cut in two on the page: markdown read an _ or * in it "
                       "as emphasis (write \\_ or \\*, or put the formula in its own $$ paragraph)",
                       first_line)});
      return;  // one is enough to find the rest
    }
    start = text.find('>', end);
    if (start != std::string::npos) ++start;
  }
}

}  // namespace

std::vector<StageProblem> check_lesson(const std::string& markdown, const LessonCheck& check) {
  std::vector<StageProblem> problems;
  const fs::path& file = check.file;
  const std::vector<std::string> lines = split_lines(markdown);
  std::vector<bool> in_fence;
  for (const Fence& fence : find_fences(lines, in_fence)) {
    if (!fence.closed) {
      problems.push_back(
          {file, fence.line, "",
           fmt::format("this code fence is never closed (a line of {} {}): the rest of the lesson "
                       "shows as code",
                       fence.length, fence.marker)});
    }
    if (fence.language.empty()) {
      problems.push_back({file, fence.line, "",
                          "code fence without a language: write ```cuda, ```python or ```rust (highlighted, "
                          "labelled), or ```text for plain text"});
    } else if (fence.language == "diagram" && check.diagrams) {
      const std::string name = trim(fence.body);
      if (!check.diagrams->contains(name)) {
        problems.push_back(
            {file, fence.line + 1, "",
             fmt::format("diagram '{}' is not one the page draws (it draws: {}); add its SVG to "
                         "web/diagrams/ and its row to DIAGRAMS in web/lesson.js",
                         name, fmt::join(*check.diagrams, ", "))});
      }
    }
  }
  // A `{{name}}` the server would not fill shows to the learner as written.
  for (std::size_t n = 0; n < lines.size(); ++n) {
    for (auto it = std::sregex_iterator(lines[n].begin(), lines[n].end(), lesson_figure_pattern());
         it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[1].str();
      if (is_lesson_figure_name(name)) continue;
      problems.push_back({file, static_cast<int>(n + 1), "",
                          fmt::format("{{{{{}}}}} is no figure the server fills, and would show as written; "
                                      "the figures are {} (docs/stages.md, \"Figures in a lesson\")",
                                      name, fmt::join(lesson_figure_names(), ", "))});
    }
  }
  const std::size_t before_math = problems.size();
  check_math(lines, in_fence, file, problems);
  const bool math_reported = problems.size() != before_math;
  if (check.render) {
    const std::string html = check.render(markdown);
    check_links(html, lines, in_fence, file, problems);
    if (!math_reported) check_rendered_math(html, lines, in_fence, file, problems);
    if (html.find("<!-- raw HTML omitted -->") != std::string::npos) {
      static const std::regex kTag(R"(<[A-Za-z!/][^>]*>)");
      for (std::size_t n = 0; n < lines.size(); ++n) {
        if (!in_fence[n] && std::regex_search(without_code_spans(lines[n]), kTag)) {
          problems.push_back(
              {file, static_cast<int>(n + 1), "",
               "raw HTML is dropped by the page (lessons are rendered in safe mode): write it in "
               "markdown",
               true});
        }
      }
    }
  }
  std::stable_sort(problems.begin(), problems.end(),
                   [](const StageProblem& a, const StageProblem& b) { return a.line < b.line; });
  return problems;
}

std::vector<StageProblem> find_author_todos(const fs::path& directory) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<StageProblem> todos;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::size_t at = line.find(kAuthorTodo);
      if (at == std::string::npos) continue;
      std::string what = trim(line.substr(at + kAuthorTodo.size()));
      if (what.starts_with(":")) what = trim(what.substr(1));
      if (what.size() > 100) what = what.substr(0, 97) + "...";
      todos.push_back({path, n, "", fmt::format("{}: {}", kAuthorTodo, what), true});
    }
  }
  return todos;
}

std::optional<std::set<std::string>> page_diagrams(const fs::path& web_dir) {
  std::ifstream in(web_dir / "lesson.js");
  if (!in) return std::nullopt;
  std::ostringstream script;
  script << in.rdbuf();
  std::set<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(web_dir / "diagrams", error)) {
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() == ".svg" && script.str().find("\"" + name + "\":") != std::string::npos) {
      names.insert(name);
    }
  }
  return names;
}

}  // namespace cudojo

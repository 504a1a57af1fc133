#include "cli/lesson_text.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <regex>
#include <vector>

#include "stage/lesson_figure_names.h"

namespace cudojo::cli {

namespace {

bool is_ascii_punctuation(char c) {
  return c > ' ' && c < 127 && std::ispunct(static_cast<unsigned char>(c));
}

// Markdown's backslash escapes, as cmark applies them before the page's KaTeX sees a formula:
// `\` before ASCII punctuation is dropped, so `\\%` reaches TeX as `\%`.
std::string markdown_unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && is_ascii_punctuation(text[i + 1])) ++i;
    out += text[i];
  }
  return out;
}

// Symbols by command name. A command not here loses its backslash and keeps its name (`\foo` ->
// `foo`), so nothing TeX-like reaches the reader.
const std::map<std::string, std::string, std::less<>>& math_symbols() {
  static const std::map<std::string, std::string, std::less<>> symbols = {
      {"times", "×"},      {"cdot", "·"},   {"div", "÷"},        {"pm", "±"},        {"mp", "∓"},
      {"le", "≤"},         {"leq", "≤"},    {"ge", "≥"},         {"geq", "≥"},       {"ne", "≠"},
      {"neq", "≠"},        {"approx", "≈"}, {"sim", "~"},        {"equiv", "≡"},     {"ll", "≪"},
      {"gg", "≫"},         {"lt", "<"},     {"gt", ">"},         {"in", "∈"},        {"notin", "∉"},
      {"infty", "∞"},      {"to", "→"},     {"rightarrow", "→"}, {"leftarrow", "←"}, {"Rightarrow", "⇒"},
      {"ldots", "…"},      {"dots", "…"},   {"cdots", "…"},      {"vert", "|"},      {"mid", "|"},
      {"lvert", "|"},      {"rvert", "|"},  {"lfloor", "⌊"},     {"rfloor", "⌋"},    {"lceil", "⌈"},
      {"rceil", "⌉"},      {"langle", "⟨"}, {"rangle", "⟩"},     {"sum", "Σ"},       {"prod", "Π"},
      {"int", "∫"},        {"oplus", "⊕"},  {"land", "∧"},       {"lor", "∨"},       {"neg", "¬"},
      {"alpha", "α"},      {"beta", "β"},   {"gamma", "γ"},      {"delta", "δ"},     {"epsilon", "ε"},
      {"varepsilon", "ε"}, {"theta", "θ"},  {"lambda", "λ"},     {"mu", "μ"},        {"pi", "π"},
      {"rho", "ρ"},        {"sigma", "σ"},  {"tau", "τ"},        {"phi", "φ"},       {"omega", "ω"},
      {"Delta", "Δ"},      {"Sigma", "Σ"},  {"Omega", "Ω"},      {"quad", "  "},     {"qquad", "    "},
  };
  return symbols;
}

// Commands whose argument is text: \text{bytes read} -> bytes read.
bool is_text_command(std::string_view name) {
  return name == "text" || name == "mathrm" || name == "textrm" || name == "mathbf" || name == "textbf" ||
         name == "mathit" || name == "textit" || name == "mathsf" || name == "mathtt" || name == "texttt" ||
         name == "operatorname" || name == "mbox";
}

// Commands that only size or style what follows: dropped.
bool is_dropped_command(std::string_view name) {
  return name == "left" || name == "right" || name == "big" || name == "Big" || name == "bigl" ||
         name == "bigr" || name == "Bigl" || name == "Bigr" || name == "displaystyle" || name == "limits" ||
         name == "nolimits";
}

// A piece that needs no parentheses after ^ or _ or under a root: a number, a word, -23.
bool is_atom(const std::string& text) {
  if (text.empty()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (i == 0 && c == '-' && text.size() > 1) continue;
    if (!(std::isalnum(c) || c == '.' || c >= 0x80)) return false;
  }
  return true;
}

// Whether a fraction's side has an operator outside brackets and |...|, so a/b would misread:
// `a+b` over `c` is (a+b)/c. A sign right after ^ or _, or leading the side, is not one.
bool needs_parentheses(const std::string& text) {
  static const std::vector<std::string> operators = {"+", "-", "=", "<", ">", "*", "/",
                                                     "·", "×", "≤", "≥", "≈", "±", "−"};
  int depth = 0;
  bool in_bars = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == '|') in_bars = !in_bars;
    if (depth > 0 || in_bars || i == 0 || text[i - 1] == '^' || text[i - 1] == '_') continue;
    for (const auto& op : operators) {
      if (text.compare(i, op.size(), op) == 0) return true;
    }
  }
  return false;
}

std::string parenthesized(const std::string& text) { return is_atom(text) ? text : "(" + text + ")"; }

// Reads TeX math left to right, converting as it goes. Groups ({...}) and arguments recurse.
class MathReader {
 public:
  explicit MathReader(std::string_view tex) : tex_(tex) {}

  // Everything up to the end, or up to the `}` closing the group being read (consumed).
  std::string read_group_body() {
    std::string out;
    while (at_ < tex_.size()) {
      const char c = tex_[at_];
      if (c == '}') {
        ++at_;
        break;
      }
      if (c == '{') {
        ++at_;
        out += read_group_body();
      } else if (c == '\\') {
        out += read_command();
      } else if (c == '^' || c == '_') {
        ++at_;
        out += c;
        out += parenthesized(tidy(read_argument()));
      } else if (std::isspace(static_cast<unsigned char>(c)) || c == '~') {
        ++at_;
        if (!out.empty() && out.back() != ' ') out += ' ';
      } else {
        out += c;
        ++at_;
      }
    }
    return out;
  }

 private:
  void skip_spaces() {
    while (at_ < tex_.size() && std::isspace(static_cast<unsigned char>(tex_[at_]))) ++at_;
  }

  // One argument: a {group}, a command, or a single character (one UTF-8 character).
  std::string read_argument() {
    skip_spaces();
    if (at_ >= tex_.size()) return "";
    if (tex_[at_] == '{') {
      ++at_;
      return read_group_body();
    }
    if (tex_[at_] == '\\') return read_command();
    std::size_t end = at_ + 1;
    while (end < tex_.size() && (static_cast<unsigned char>(tex_[end]) & 0xC0) == 0x80) ++end;
    std::string one(tex_.substr(at_, end - at_));
    at_ = end;
    return one;
  }

  // \sum_{i=1}^{K}: the limits after a big operator, as [i=1..K].
  std::string read_limits() {
    std::string lower, upper;
    for (int round = 0; round < 2; ++round) {
      skip_spaces();
      if (at_ >= tex_.size() || (tex_[at_] != '_' && tex_[at_] != '^')) break;
      const char which = tex_[at_++];
      (which == '_' ? lower : upper) = tidy(read_argument());
    }
    if (lower.empty() && upper.empty()) return "";
    if (upper.empty()) return "[" + lower + "]";
    return "[" + lower + ".." + upper + "]";
  }

  std::string read_command() {
    ++at_;  // the backslash
    if (at_ >= tex_.size()) return "";
    if (!std::isalpha(static_cast<unsigned char>(tex_[at_]))) {
      const char c = tex_[at_++];
      if (c == ',' || c == ':' || c == ';' || c == ' ') return " ";
      if (c == '!') return "";
      if (c == '\\') return " ";  // a line break inside a formula
      if (c == '|') return "‖";
      return std::string(1, c);  // \% \$ \# \& \_ \{ \}
    }
    const std::size_t start = at_;
    while (at_ < tex_.size() && std::isalpha(static_cast<unsigned char>(tex_[at_]))) ++at_;
    const std::string name(tex_.substr(start, at_ - start));
    if (is_text_command(name)) return read_argument();
    if (is_dropped_command(name)) {
      skip_spaces();
      if (at_ < tex_.size() && tex_[at_] == '.') ++at_;  // \left. is no delimiter at all
      return "";
    }
    if (name == "frac" || name == "dfrac" || name == "tfrac") {
      const std::string top = tidy(read_argument());
      const std::string bottom = tidy(read_argument());
      const std::string a = needs_parentheses(top) ? "(" + top + ")" : top;
      const std::string b = needs_parentheses(bottom) ? "(" + bottom + ")" : bottom;
      const bool spaced = a.find(' ') != std::string::npos || b.find(' ') != std::string::npos;
      return a + (spaced ? " / " : "/") + b;
    }
    if (name == "sqrt") {
      std::string index;
      skip_spaces();
      if (at_ < tex_.size() && tex_[at_] == '[') {
        const std::size_t close = tex_.find(']', at_);
        index = std::string(tex_.substr(at_ + 1, close == std::string_view::npos ? 0 : close - at_ - 1));
        at_ = close == std::string_view::npos ? tex_.size() : close + 1;
      }
      const std::string root = index == "3" ? "∛" : index == "4" ? "∜" : index.empty() ? "√" : index + "√";
      return root + parenthesized(tidy(read_argument()));
    }
    if (name == "lvert") {
      skip_spaces();  // |got - ref|, not | got - ref |
      return "|";
    }
    if (name == "rvert") return "\x01|";  // tidy() takes the space before it
    const auto& symbols = math_symbols();
    const auto found = symbols.find(name);
    if (name == "sum" || name == "prod" || name == "int") return found->second + read_limits();
    return found != symbols.end() ? found->second : name;  // \log, \max, an unknown one: its name
  }

 public:
  // Spaces collapsed and trimmed; the space before a closing bar removed.
  static std::string tidy(const std::string& text) {
    std::string out;
    for (const char c : text) {
      if (c == '\x01') {
        while (!out.empty() && out.back() == ' ') out.pop_back();
        continue;
      }
      if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
      out += c;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }

 private:
  std::string_view tex_;
  std::size_t at_ = 0;
};

// Columns a UTF-8 string takes, one per character.
std::size_t columns(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// Words filled into lines of at most `width` columns, each starting with `indent`.
std::string wrapped(const std::string& text, const std::string& indent, std::size_t width = 100) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && columns(indent + line + " " + word) > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

// The lines a ```diagram fence becomes, at the fence's indent.
std::string diagram_lines(const std::string& name, const std::string& indent, const DiagramLookup& diagrams) {
  const std::optional<DiagramText> text = diagrams ? diagrams(name) : std::nullopt;
  if (!text) return fmt::format("{}(diagram '{}': drawn on the lesson's web page)\n", indent, name);
  std::string out = fmt::format("{}Diagram: {} (drawn on the lesson's web page)\n", indent,
                                text->title.empty() ? name : text->title);
  if (!text->description.empty()) out += wrapped(text->description, indent + "  ");
  return out;
}

// Math, markdown escapes and unfilled figures in text outside code fences (a run of lines). Inline
// code spans are copied as written.
std::string convert_prose(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '`') {  // a code span: the same run of backticks closes it
      std::size_t run = i;
      while (run < text.size() && text[run] == '`') ++run;
      const std::string_view ticks = text.substr(i, run - i);
      const std::size_t close = text.find(ticks, run);
      const std::size_t end = close == std::string_view::npos ? run : close + ticks.size();
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (text.compare(i, 2, "$$") == 0) {
      const std::size_t close = text.find("$$", i + 2);
      if (close != std::string_view::npos) {
        // On its own line, indented past the line it sat on.
        const std::size_t line_start = out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1;
        std::string indent = out.substr(line_start);
        const bool alone_before = indent.find_first_not_of(' ') == std::string::npos;
        if (!alone_before) {
          while (!out.empty() && out.back() == ' ') out.pop_back();
          indent = indent.substr(0, indent.find_first_not_of(' '));
          out += "\n";
        } else {
          out.erase(line_start);
        }
        out += indent + "    " + math_to_text(markdown_unescape(text.substr(i + 2, close - i - 2))) + "\n";
        i = close + 2;
        while (i < text.size() && text[i] == ' ') ++i;
        if (i < text.size() && text[i] == '\n') ++i;  // the formula's line is ended already
        continue;
      }
    }
    if (text.compare(i, 3, "\\\\(") == 0) {
      const std::size_t close = text.find("\\\\)", i + 3);
      if (close != std::string_view::npos) {
        out += math_to_text(markdown_unescape(text.substr(i + 3, close - i - 3)));
        i = close + 3;
        continue;
      }
    }
    if (c == '\\' && i + 1 < text.size() && is_ascii_punctuation(text[i + 1])) {
      out += text[i + 1];
      i += 2;
      continue;
    }
    out += c;
    ++i;
  }
  // A figure the lesson names but nothing filled (`cudojo course check` reports the name).
  return std::regex_replace(out, lesson_figure_pattern(), "($1: no figure)");
}

// A fence's opening line: its indent, its marker (``` or ~~~, maybe longer) and its info string.
struct Fence {
  std::string indent, marker, info;
};

std::optional<Fence> fence_of(const std::string& line) {
  const std::size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos || (line[start] != '`' && line[start] != '~')) return std::nullopt;
  std::size_t end = start;
  while (end < line.size() && line[end] == line[start]) ++end;
  if (end - start < 3) return std::nullopt;
  std::string info = line.substr(end);
  info.erase(0, info.find_first_not_of(' '));
  info.erase(info.find_last_not_of(" \r") + 1);
  return Fence{line.substr(0, start), line.substr(start, end - start), info};
}

bool closes(const std::string& line, const Fence& fence) {
  const auto closing = fence_of(line);
  return closing && closing->info.empty() && closing->marker[0] == fence.marker[0] &&
         closing->marker.size() >= fence.marker.size();
}

}  // namespace

std::string math_to_text(std::string_view tex) { return MathReader::tidy(MathReader(tex).read_group_body()); }

std::string lesson_to_text(std::string_view markdown, const DiagramLookup& diagrams) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < markdown.size()) {
    const std::size_t end = markdown.find('\n', start);
    lines.emplace_back(markdown.substr(start, end == std::string_view::npos ? end : end - start));
    start = end == std::string_view::npos ? markdown.size() : end + 1;
  }
  std::string out, prose;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto fence = fence_of(lines[i]);
    if (!fence) {
      prose += lines[i] + "\n";
      continue;
    }
    out += convert_prose(prose);
    prose.clear();
    std::size_t close = i + 1;
    while (close < lines.size() && !closes(lines[close], *fence)) ++close;
    const bool is_diagram = fence->info == "diagram";
    if (is_diagram) {
      std::string name;
      for (std::size_t j = i + 1; j < close && name.empty(); ++j) {
        name = lines[j];
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t\r") + 1);
      }
      out += diagram_lines(name, fence->indent, diagrams);
    } else {  // code: exactly as written, fences included
      for (std::size_t j = i; j <= close && j < lines.size(); ++j) out += lines[j] + "\n";
    }
    i = close;
  }
  out += convert_prose(prose);
  if (!markdown.empty() && markdown.back() != '\n' && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::optional<DiagramText> svg_diagram_text(std::string_view svg) {
  auto element = [&](std::string_view tag) -> std::string {
    const std::size_t open = svg.find("<" + std::string(tag));
    if (open == std::string_view::npos) return "";
    const std::size_t body = svg.find('>', open);
    const std::size_t close = svg.find("</" + std::string(tag) + ">", open);
    if (body == std::string_view::npos || close == std::string_view::npos || close < body) return "";
    std::string text(svg.substr(body + 1, close - body - 1));
    static const std::pair<const char*, const char*> entities[] = {
        {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&apos;", "'"}, {"&amp;", "&"}};
    for (const auto& [entity, character] : entities) {
      for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
        text.replace(at, std::string_view(entity).size(), character);
    }
    return MathReader::tidy(std::regex_replace(text, std::regex("\\s+"), " "));
  };
  DiagramText text{element("title"), element("desc")};
  if (text.title.empty() && text.description.empty()) return std::nullopt;
  return text;
}

}  // namespace cudojo::cli

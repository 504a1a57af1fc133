#include "stage/kernel_scan.h"

#include <algorithm>
#include <cctype>

namespace cudojo {

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

int line_at(std::string_view text, std::size_t position) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(position), '\n'));
}

// The source with comments blanked to spaces (newlines kept, so positions and lines hold). String
// and character literals are stepped over, so a "//" inside one starts no comment, and blanked too
// when `blank_strings` (CUDA: a "__global__ void f(" in a string defines nothing; Rust keeps them
// for extern "ptx-kernel"). C++ and Rust share the comment syntax; `hash_comments` is Python's.
std::string without_comments(std::string_view source, bool hash_comments, bool blank_strings = false) {
  std::string text(source);
  std::size_t i = 0;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < text.size(); ++k) {
      if (text[k] != '\n') text[k] = ' ';
    }
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || (c == '\'' && (hash_comments ||
                                   (i + 2 < text.size() && (text[i + 2] == '\'' || text[i + 1] == '\\'))))) {
      // A string, or a character literal ('x' or '\n'); a Rust lifetime ('a) is neither.
      std::size_t k = i + 1;
      while (k < text.size() && text[k] != c && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      if (blank_strings) blank(i + 1, k);
      i = k + 1;
    } else if (hash_comments && c == '#') {
      const std::size_t end = text.find('\n', i);
      blank(i, end == std::string::npos ? text.size() : end);
      i = end == std::string::npos ? text.size() : end;
    } else if (!hash_comments && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const std::size_t end = text.find('\n', i);
      blank(i, end == std::string::npos ? text.size() : end);
      i = end == std::string::npos ? text.size() : end;
    } else if (!hash_comments && c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string::npos ? text.size() : end + 2;
      blank(i, stop);
      i = stop;
    } else {
      ++i;
    }
  }
  return text;
}

std::size_t skip_spaces(std::string_view text, std::size_t i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

// The position of every whole word `word` in text.
std::vector<std::size_t> word_positions(std::string_view text, std::string_view word) {
  std::vector<std::size_t> found;
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !is_word_char(text[at - 1]);
    const bool ends = at + word.size() >= text.size() || !is_word_char(text[at + word.size()]);
    if (starts && ends) found.push_back(at);
  }
  return found;
}

// After `__global__`: the first identifier followed by '(' that is not an attribute is the name.
std::vector<KernelDefinition> cuda_kernels(std::string_view source) {
  const std::string text = without_comments(source, false, true);
  std::vector<KernelDefinition> kernels;
  for (const std::size_t at : word_positions(text, "__global__")) {
    std::size_t i = at + 10;
    while (i < text.size() && text[i] != ';' && text[i] != '{') {
      if (!is_word_char(text[i]) || std::isdigit(static_cast<unsigned char>(text[i]))) {
        ++i;
        continue;
      }
      const std::size_t start = i;
      while (i < text.size() && is_word_char(text[i])) ++i;
      const std::string word = text.substr(start, i - start);
      const std::size_t next = skip_spaces(text, i);
      if (next >= text.size() || text[next] != '(') continue;
      if (word.starts_with("__") || word == "alignas") {  // __launch_bounds__(256), __attribute__((...))
        int depth = 0;
        for (i = next; i < text.size(); ++i) {
          if (text[i] == '(') ++depth;
          if (text[i] == ')' && --depth == 0) break;
        }
        continue;
      }
      kernels.push_back({word, line_at(text, start)});
      break;
    }
  }
  return kernels;
}

std::string_view trimmed(std::string_view line) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
  return line;
}

// `def name(` at the start of a (trimmed) line: the name, else empty.
std::string python_def_name(std::string_view line) {
  line = trimmed(line);
  if (!line.starts_with("def ")) return {};
  line.remove_prefix(4);
  line = trimmed(line);
  std::size_t end = 0;
  while (end < line.size() && is_word_char(line[end])) ++end;
  const std::string_view rest = trimmed(line.substr(end));
  return end > 0 && rest.starts_with("(") ? std::string(line.substr(0, end)) : std::string();
}

// Decorators are read whole, across lines while their parentheses are open.
std::vector<KernelDefinition> python_kernels(std::string_view source) {
  const std::string text = without_comments(source, true);
  std::vector<KernelDefinition> kernels;
  bool kernel_decorator = false;
  std::string decorator;
  int open = 0;
  int line_number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trimmed(std::string_view(text).substr(start, end - start));
    ++line_number;
    start = end + 1;
    if (open > 0 || line.starts_with("@")) {
      decorator += std::string(line);
      open += static_cast<int>(std::count(line.begin(), line.end(), '(')) -
              static_cast<int>(std::count(line.begin(), line.end(), ')'));
      if (open <= 0) {
        std::string squeezed;
        for (char c : decorator) {
          if (!std::isspace(static_cast<unsigned char>(c))) squeezed += c;
        }
        kernel_decorator = kernel_decorator || (squeezed.find("cuda.jit") != std::string::npos &&
                                                squeezed.find("device=True") == std::string::npos);
        decorator.clear();
        open = 0;
      }
      continue;
    }
    if (line.empty()) continue;
    const std::string name = python_def_name(line);
    if (!name.empty() && kernel_decorator) kernels.push_back({name, line_number});
    kernel_decorator = false;
  }
  return kernels;
}

// `fn name(` whose item (back to the previous '}', ';' or '{') says #[kernel] or "ptx-kernel".
std::vector<KernelDefinition> rust_kernels(std::string_view source) {
  const std::string text = without_comments(source, false);
  std::vector<KernelDefinition> kernels;
  for (const std::size_t at : word_positions(text, "fn")) {
    std::size_t i = skip_spaces(text, at + 2);
    const std::size_t name_start = i;
    while (i < text.size() && is_word_char(text[i])) ++i;
    if (i == name_start) continue;
    const std::size_t item_start = text.find_last_of("};{", at);
    const std::string_view item =
        std::string_view(text).substr(item_start == std::string::npos ? 0 : item_start + 1,
                                      at - (item_start == std::string::npos ? 0 : item_start + 1));
    if (item.find("#[kernel]") != std::string_view::npos ||
        item.find("ptx-kernel") != std::string_view::npos) {
      kernels.push_back({text.substr(name_start, i - name_start), line_at(text, name_start)});
    }
  }
  return kernels;
}

}  // namespace

std::vector<KernelDefinition> find_kernel_definitions(Language language, std::string_view source) {
  switch (language) {
    case Language::kPython:
      return python_kernels(source);
    case Language::kRust:
      return rust_kernels(source);
    case Language::kCuda:
      break;
  }
  return cuda_kernels(source);
}

std::optional<int> find_function_line(Language language, std::string_view source, std::string_view name) {
  const std::string text = without_comments(source, language == Language::kPython);
  for (const std::size_t at : word_positions(text, name)) {
    const std::size_t next = skip_spaces(text, at + name.size());
    if (next >= text.size() || (text[next] != '(' && text[next] != '<')) continue;
    // What comes before the name: `def` (Python), `fn` (Rust), a type (CUDA C++: a word or '*').
    std::size_t before = at;
    while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
    const std::string_view head = std::string_view(text).substr(0, before);
    const bool defined =
        language == Language::kPython ? head.ends_with("def")
        : language == Language::kRust
            ? head.ends_with("fn")
            : !head.empty() && (is_word_char(head.back()) || head.back() == '*' || head.back() == '&');
    if (defined && !(language == Language::kCuda && (head.ends_with("return") || head.ends_with("new")))) {
      return line_at(text, at);
    }
  }
  return std::nullopt;
}

std::string_view kernel_declaration(Language language) {
  switch (language) {
    case Language::kPython:
      return "a @cuda.jit function";
    case Language::kRust:
      return "a #[kernel] fn";
    case Language::kCuda:
      break;
  }
  return "a __global__ function";
}

}  // namespace cudojo

#include "compile/include_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace cudojo {

namespace {

constexpr std::array<std::string_view, 6> kAllowedPrefixes = {
    "cooperative_groups/", "cuda/std/", "cuda/", "cub/", "nv/", "cuda/__"};

constexpr std::array<std::string_view, 11> kNvrtcBuiltinHeaders = {
    "cooperative_groups.h", "cuda_fp16.h",  "cuda_fp16.hpp",   "cuda_bf16.h",      "cuda_bf16.hpp",
    "cuda_fp8.h",           "cuda_fp8.hpp", "cuda_pipeline.h", "cuda_awbarrier.h", "sm_60_atomic_functions.h",
    "vector_types.h"};

const std::vector<ShimHeader> kShims = {
    {"cstdio", "// cudojo: device printf needs no declaration under NVRTC\n"},
    {"stdio.h", "// cudojo: device printf needs no declaration under NVRTC\n"},
    {"cuda_runtime.h", "// cudojo: the device-side runtime is built into NVRTC\n"},
    {"cuda_runtime_api.h", "// cudojo: the device-side runtime is built into NVRTC\n"},
    {"cuda.h", "// cudojo: the driver API is host-only; nothing to declare for device code\n"},
    {"cmath", "// cudojo: NVRTC declares the device math functions itself\n"},
    {"math.h", "// cudojo: NVRTC declares the device math functions itself\n"},
    {"cstdint",
     "#include <cuda/std/cstdint>\nusing cuda::std::int8_t; using cuda::std::int16_t;\n"
     "using cuda::std::int32_t; using cuda::std::int64_t; using cuda::std::uint8_t;\n"
     "using cuda::std::uint16_t; using cuda::std::uint32_t; using cuda::std::uint64_t;\n"},
    {"stdint.h", "#include <cstdint>\n"},
    {"climits", "#include <cuda/std/climits>\n"},
    {"limits.h", "#include <cuda/std/climits>\n"},
    {"cfloat", "#include <cuda/std/cfloat>\n"},
    {"float.h", "#include <cuda/std/cfloat>\n"},
};

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with line splices (backslash-newline) removed, and for each kept character the
// 1-based physical line it came from.
struct Logical {
  std::string text;
  std::vector<int> line_of;
};

Logical splice_lines(std::string_view source) {
  Logical out;
  out.text.reserve(source.size());
  out.line_of.reserve(source.size());
  int line = 1;
  for (std::size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (c == '\\') {
      std::size_t j = i + 1;
      while (j < source.size() && (source[j] == ' ' || source[j] == '\t' || source[j] == '\r')) ++j;
      if (j < source.size() && source[j] == '\n') {
        i = j;
        ++line;
        continue;
      }
    }
    out.text.push_back(c);
    out.line_of.push_back(line);
    if (c == '\n') ++line;
  }
  return out;
}

class DirectiveScanner {
 public:
  explicit DirectiveScanner(const Logical& logical) : s_(logical.text), line_of_(logical.line_of) {}

  IncludeScan run() {
    bool at_line_start = true;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        at_line_start = true;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (starts_with("//")) {
        skip_line_comment();
      } else if (starts_with("/*")) {
        skip_block_comment();  // a comment counts as whitespace: '/* */ #include' is a directive
      } else if (at_line_start && (c == '#' || starts_with("%:"))) {
        pos_ += (c == '#') ? 1 : 2;
        directive();
        at_line_start = true;
      } else {
        token();
        at_line_start = false;
      }
    }
    return std::move(result_);
  }

 private:
  bool starts_with(std::string_view what) const { return s_.compare(pos_, what.size(), what) == 0; }
  int line_at(std::size_t p) const {
    if (line_of_.empty()) return 1;
    return line_of_[std::min(p, line_of_.size() - 1)];
  }

  void skip_line_comment() {
    while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
  }
  void skip_block_comment() {
    std::size_t end = s_.find("*/", pos_ + 2);
    pos_ = (end == std::string::npos) ? s_.size() : end + 2;
  }
  void skip_horizontal_space_and_comments() {
    while (pos_ < s_.size()) {
      if (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r') {
        ++pos_;
      } else if (starts_with("/*")) {
        skip_block_comment();
      } else {
        break;
      }
    }
  }

  // A quoted literal: ends at the closing quote or, unterminated, at the end of the line (which is
  // also where the compiler gives up on it).
  void quoted(char quote) {
    ++pos_;
    while (pos_ < s_.size() && s_[pos_] != '\n') {
      if (s_[pos_] == '\\') {
        pos_ += 2;
        continue;
      }
      if (s_[pos_] == quote) {
        ++pos_;
        return;
      }
      ++pos_;
    }
  }

  // R"delim( ... )delim": may span lines and holds anything, including "*/" and '#'.
  void raw_string() {
    std::size_t open = s_.find('(', pos_);
    std::size_t newline = s_.find('\n', pos_);
    if (open == std::string::npos || (newline != std::string::npos && newline < open)) {
      quoted('"');
      return;
    }
    std::string closing = ")" + s_.substr(pos_ + 1, open - pos_ - 1) + "\"";
    std::size_t end = s_.find(closing, open + 1);
    pos_ = (end == std::string::npos) ? s_.size() : end + closing.size();
  }

  void token() {
    char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))) {
      pp_number();
    } else if (is_identifier_char(c)) {
      std::size_t start = pos_;
      while (pos_ < s_.size() && is_identifier_char(s_[pos_])) ++pos_;
      std::string_view word(s_.data() + start, pos_ - start);
      // Encoding prefixes glue onto the literal that follows: u8"..", LR"(..)", u'x'.
      if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) {
        static constexpr std::array<std::string_view, 9> kPrefixes = {"u8",  "u",  "U",  "L", "R",
                                                                      "u8R", "uR", "UR", "LR"};
        bool is_prefix = std::find(kPrefixes.begin(), kPrefixes.end(), word) != kPrefixes.end();
        if (is_prefix && s_[pos_] == '"' && word.back() == 'R') {
          raw_string();
        } else if (is_prefix) {
          quoted(s_[pos_]);
        }
      }
    } else if (c == '"') {
      quoted('"');
    } else if (c == '\'') {
      quoted('\'');
    } else {
      ++pos_;
    }
  }

  // A preprocessing number: digits, letters, '.', exponent signs, and digit separators (1'000), so
  // that the quote in 1'000 is not mistaken for the start of a character literal.
  void pp_number() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (is_identifier_char(c) || c == '.') {
        ++pos_;
      } else if ((c == '+' || c == '-') && pos_ > 0 &&
                 std::string_view("eEpP").find(s_[pos_ - 1]) != std::string_view::npos) {
        ++pos_;
      } else if (c == '\'' && pos_ + 1 < s_.size() && is_identifier_char(s_[pos_ + 1])) {
        pos_ += 2;
      } else {
        break;
      }
    }
  }

  void refuse(std::size_t start, std::string reason) {
    std::size_t end = s_.find('\n', start);
    if (end == std::string::npos) end = s_.size();
    std::string text = s_.substr(start, end - start);
    if (text.size() > 120) text = text.substr(0, 120) + "...";
    result_.refused.push_back({line_at(start), std::move(text), std::move(reason)});
  }

  void directive() {
    const std::size_t start = pos_ - 1;
    skip_horizontal_space_and_comments();
    std::size_t name_start = pos_;
    while (pos_ < s_.size() && is_identifier_char(s_[pos_])) ++pos_;
    std::string name = s_.substr(name_start, pos_ - name_start);
    if (name == "include" || name == "include_next" || name == "import") {
      include_operand(start, name);
    } else if (name == "embed") {
      refuse(start, "#embed reads a host file; submissions may not read files");
    } else if (name == "line") {
      refuse(start, "#line would make diagnostics point at another file; remove it");
    }
    // The rest of a directive line holds no directive; comments in it may still span lines.
    while (pos_ < s_.size() && s_[pos_] != '\n') {
      if (starts_with("/*")) {
        skip_block_comment();
      } else if (starts_with("//")) {
        skip_line_comment();
      } else if (s_[pos_] == '"' || s_[pos_] == '\'') {
        quoted(s_[pos_]);
      } else {
        ++pos_;
      }
    }
  }

  void include_operand(std::size_t start, const std::string& directive_name) {
    if (directive_name != "include") {
      refuse(start, fmt::format("#{} is not allowed; use #include <name>", directive_name));
      return;
    }
    skip_horizontal_space_and_comments();
    if (pos_ >= s_.size() || (s_[pos_] != '<' && s_[pos_] != '"')) {
      refuse(start,
             "an #include must name its header directly as <name> or \"name\"; "
             "computed includes are not allowed");
      return;
    }
    const char close = s_[pos_] == '<' ? '>' : '"';
    std::size_t name_end = s_.find_first_of(std::string{close} + "\n", pos_ + 1);
    if (name_end == std::string::npos || s_[name_end] != close) {
      refuse(start, "unterminated #include");
      return;
    }
    std::string header = s_.substr(pos_ + 1, name_end - pos_ - 1);
    pos_ = name_end + 1;
    skip_horizontal_space_and_comments();
    if (pos_ < s_.size() && s_[pos_] != '\n' && !starts_with("//")) {
      refuse(start, "unexpected text after the header name");
      return;
    }
    if (!header_allowed(header)) {
      refuse(start, fmt::format("'{}' is not an allowed header: submissions may include CUDA's own "
                                "headers (<cooperative_groups.h>, <cuda/std/...>, <cub/...>) and "
                                "<cstdio>, <cstdint>, <climits>, <cfloat>, <cmath>, <cuda_runtime.h>",
                                header));
      return;
    }
    result_.allowed.push_back(header);
  }

  const std::string& s_;
  const std::vector<int>& line_of_;
  std::size_t pos_ = 0;
  IncludeScan result_;
};

}  // namespace

bool header_allowed(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-')) {
      return false;
    }
  }
  if (name.front() == '/' || name.front() == '.' || name.find("..") != std::string_view::npos ||
      name.find("//") != std::string_view::npos) {
    return false;
  }
  for (const auto& shim : kShims) {
    if (shim.name == name) return true;
  }
  for (auto builtin : kNvrtcBuiltinHeaders) {
    if (builtin == name) return true;
  }
  for (auto prefix : kAllowedPrefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

const std::vector<ShimHeader>& shim_headers() { return kShims; }

IncludeScan scan_includes(std::string_view source) {
  // Trigraphs are gone from C++17, but a compiler in an older mode would read ??= as '#' and ??/ as
  // a backslash; refusing them costs learners nothing.
  IncludeScan early;
  for (std::string_view trigraph : {"?"
                                    "?=",
                                    "?"
                                    "?/"}) {
    if (auto at = source.find(trigraph); at != std::string_view::npos) {
      int line = 1 + static_cast<int>(std::count(source.begin(), source.begin() + at, '\n'));
      early.refused.push_back({line, std::string(trigraph), "trigraphs are not allowed"});
    }
  }
  Logical logical = splice_lines(source);
  IncludeScan scan = DirectiveScanner(logical).run();
  scan.refused.insert(scan.refused.begin(), early.refused.begin(), early.refused.end());
  return scan;
}

}  // namespace cudojo

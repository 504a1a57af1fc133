#include "compile/include_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "compile/utf8.h"

namespace cudojo {

namespace {

// The allowlist, as people read it (allowed_headers() below). A name ending in '/' is a folder.
// The "refused" rows sit inside allowed folders: CUB's host-side headers need libstdc++ and host
// code, which NVRTC has not, so they fail after seconds and dozens of errors (cub/cub.cuh ends with
// `cannot open source file "iterator"`); they are refused at once instead. Checked against CUDA
// 13.0 by compiling every header under cub/ alone.
constexpr std::array kHeaderTable = {
    AllowedHeader{"cub/cub.cuh", "refused",
                  "CUB's umbrella header also pulls in the device-wide algorithms, which are host code "
                  "NVRTC cannot compile"},
    AllowedHeader{
        "cub/device/", "refused",
        "device-wide algorithms (cub::DeviceReduce, ...) are launched from the host, not from a kernel"},
    AllowedHeader{"cub/detail/launcher/", "refused", "host-side kernel launchers"},
    AllowedHeader{"cub/util_allocator.cuh", "refused", "a host-side memory allocator"},
    AllowedHeader{"cooperative_groups.h", "cuda",
                  "thread groups: this_thread_block(), tiled_partition(), sync()"},
    AllowedHeader{"cooperative_groups/", "cuda", "cooperative_groups/reduce.h, scan.h, memcpy_async.h"},
    AllowedHeader{
        "cub/block/", "cuda",
        "block-wide primitives: BlockReduce, BlockScan, BlockLoad, BlockStore, BlockRadixSort, ..."},
    AllowedHeader{"cub/warp/", "cuda",
                  "warp-wide primitives: WarpReduce, WarpScan, WarpLoad, WarpStore, ..."},
    AllowedHeader{"cub/thread/", "cuda", "per-thread helpers: ThreadReduce, ThreadLoad, ThreadStore, ..."},
    AllowedHeader{"cub/", "cuda",
                  "the rest of CUB's device-side headers: iterator/, grid/, util_ptx.cuh, ..."},
    AllowedHeader{"cuda/std/", "cuda",
                  "libcu++, the standard library in device code: cuda/std/cstdint, limits, atomic, ..."},
    AllowedHeader{"cuda/", "cuda",
                  "CUDA C++ extensions: cuda/atomic, cuda/barrier, cuda/pipeline, cuda/ptx, ..."},
    AllowedHeader{"nv/", "cuda", "nv/target: NV_IF_TARGET"},
    AllowedHeader{"cuda_fp16.h", "cuda", "__half and its intrinsics"},
    AllowedHeader{"cuda_bf16.h", "cuda", "__nv_bfloat16 and its intrinsics"},
    AllowedHeader{"cuda_fp8.h", "cuda", "8-bit floating-point types"},
    AllowedHeader{"cuda_fp16.hpp", "cuda", "part of cuda_fp16.h"},
    AllowedHeader{"cuda_bf16.hpp", "cuda", "part of cuda_bf16.h"},
    AllowedHeader{"cuda_fp8.hpp", "cuda", "part of cuda_fp8.h"},
    AllowedHeader{"cuda_pipeline.h", "cuda", "__pipeline_memcpy_async and friends"},
    AllowedHeader{"cuda_awbarrier.h", "cuda", "arrive/wait barriers"},
    AllowedHeader{"sm_60_atomic_functions.h", "cuda", "atomic functions of sm_60 and later"},
    AllowedHeader{"vector_types.h", "cuda", "float4, int2, ... (also there without it)"},
    AllowedHeader{"cstdio", "shim", "empty: device printf needs no declaration"},
    AllowedHeader{"stdio.h", "shim", "empty: device printf needs no declaration"},
    AllowedHeader{"cuda_runtime.h", "shim", "empty: the device-side runtime is built in"},
    AllowedHeader{"cuda_runtime_api.h", "shim", "empty: the device-side runtime is built in"},
    AllowedHeader{"cuda.h", "shim", "empty: the driver API is host-only"},
    AllowedHeader{"cmath", "shim", "empty: the device math functions are built in"},
    AllowedHeader{"math.h", "shim", "empty: the device math functions are built in"},
    AllowedHeader{"cstdint", "shim", "int32_t, uint64_t, ... from cuda/std/cstdint"},
    AllowedHeader{"stdint.h", "shim", "int32_t, uint64_t, ... from cuda/std/cstdint"},
    AllowedHeader{"climits", "shim", "INT_MAX, ... from cuda/std/climits"},
    AllowedHeader{"limits.h", "shim", "INT_MAX, ... from cuda/std/climits"},
    AllowedHeader{"cfloat", "shim", "FLT_MAX, ... from cuda/std/cfloat"},
    AllowedHeader{"float.h", "shim", "FLT_MAX, ... from cuda/std/cfloat"},
};

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

// The row of the table that decides a name: the first that names it exactly or as a folder.
const AllowedHeader* table_row(std::string_view name) {
  for (const auto& row : kHeaderTable) {
    if (row.name.ends_with('/') ? name.starts_with(row.name) : name == row.name) return &row;
  }
  return nullptr;
}

// Why a header name is refused, in words that say what to include instead.
std::string header_refusal(std::string_view header) {
  const AllowedHeader* row = table_row(header);
  if (row && row->kind == "refused") {
    return fmt::format(
        "<{}> is not available: {}. Include the block-, warp- or thread-level header you use, e.g. "
        "<cub/block/block_reduce.cuh>, <cub/block/block_scan.cuh>, <cub/warp/warp_reduce.cuh>",
        header, row->what);
  }
  return fmt::format(
      "'{}' is not an allowed header: submissions may include CUDA's own headers "
      "(<cooperative_groups.h>, <cuda/std/...>, <cuda/...>, <cub/block/...>, <cub/warp/...>, "
      "<cub/thread/...>, <cuda_fp16.h>) and <cstdio>, <cstdint>, <climits>, <cfloat>, <cmath>, "
      "<cuda_runtime.h>",
      valid_utf8(utf8_prefix(header, 120)));
}

// `__has_include` must only ever be asked about an allowed header named directly. It is also
// reachable through a macro (CCCL's `_CCCL_HAS_INCLUDE(x)` expands to it) and by pasting tokens
// (`CAT(__has_, include)`), so every identifier that contains "has_include" is refused, and so is
// every identifier that could be the left piece of a paste that spells one: the leftmost piece of a
// pasted token is always a token of the source or of a header's macro (CUDA 13.0's headers paste no
// such piece: grep '##' in include/ and include/cccl/).
bool could_spell_has_include(std::string_view word) {
  std::string lower(word);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("has_include") != std::string::npos) return true;
  for (std::string_view target : {"__has_include", "_CCCL_HAS_INCLUDE"}) {
    if (!word.empty() && word.size() < target.size() && target.starts_with(word)) return true;
  }
  return false;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The source with line splices (backslash-newline) removed, and for each kept character the
// 1-based physical line it came from.
struct Logical {
  std::string text;
  std::vector<int> line_of;
  std::vector<std::size_t> offset_of;  // and its offset in the source
};

Logical splice_lines(std::string_view source) {
  Logical out;
  out.text.reserve(source.size());
  out.line_of.reserve(source.size());
  out.offset_of.reserve(source.size());
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
    out.offset_of.push_back(i);
    if (c == '\n') ++line;
  }
  return out;
}

class DirectiveScanner {
 public:
  explicit DirectiveScanner(const Logical& logical)
      : s_(logical.text), line_of_(logical.line_of), offset_of_(logical.offset_of) {}

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
        const std::size_t hash = pos_;
        pos_ += (c == '#') ? 1 : 2;
        directive(hash);
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

  // One token of code (also of a directive's rest): identifiers are checked for __has_include,
  // literals are skipped whole, and trigraphs outside comments and literals are refused.
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
          return;
        } else if (is_prefix) {
          quoted(s_[pos_]);
          return;
        }
      }
      identifier(start, word);
    } else if (c == '"') {
      quoted('"');
    } else if (c == '\'') {
      quoted('\'');
    } else if (starts_with("?"
                           "?=") ||
               starts_with("?"
                           "?/")) {
      // NVRTC's C++17 mode has trigraphs off (it warns "support for trigraphs is disabled"), so
      // these are plain characters to it; outside comments and literals they are refused anyway,
      // in case a later mode turns trigraphs back on. In comments and literals they are text.
      refuse(pos_,
             "trigraphs (?"
             "?= and ?"
             "?/) are not allowed outside comments and strings");
      pos_ += 3;
    } else {
      ++pos_;
    }
  }

  void identifier(std::size_t start, std::string_view word) {
    if (word == "__has_include") {
      has_include(start);
    } else if (could_spell_has_include(word)) {
      refuse(start, fmt::format("'{}' is not allowed: __has_include may only be written directly, with an "
                                "allowed header, as __has_include(<cub/block/block_reduce.cuh>)",
                                valid_utf8(utf8_prefix(word, 60))));
    }
  }

  // __has_include( <name> ) or __has_include( "name" ), nothing computed, and the name allowed.
  void has_include(std::size_t start) {
    const std::string refused =
        "__has_include may only ask about an allowed header named directly, as "
        "__has_include(<cub/block/block_reduce.cuh>); other names would look into the host's files";
    skip_horizontal_space_and_comments();
    if (pos_ >= s_.size() || s_[pos_] != '(') {
      refuse(start, refused);
      return;
    }
    ++pos_;
    skip_horizontal_space_and_comments();
    if (pos_ >= s_.size() || (s_[pos_] != '<' && s_[pos_] != '"')) {
      refuse(start, refused);
      return;
    }
    const char close = s_[pos_] == '<' ? '>' : '"';
    const std::size_t name_end = s_.find_first_of(std::string{close} + "\n", pos_ + 1);
    if (name_end == std::string::npos || s_[name_end] != close) {
      refuse(start, refused);
      return;
    }
    const std::size_t name_start = pos_;
    const std::string header = s_.substr(pos_ + 1, name_end - pos_ - 1);
    pos_ = name_end + 1;
    skip_horizontal_space_and_comments();
    if (pos_ >= s_.size() || s_[pos_] != ')' || !header_allowed(header)) {
      refuse(start, refused);
      return;
    }
    ++pos_;
    if (close == '"') quoted_name(name_start, name_end);
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

  // The excerpt runs from `start` (the directive's '#' or "%:", or the refused token) to the end of
  // its line, at most 120 bytes, cut between characters.
  void refuse(std::size_t start, std::string reason) {
    std::size_t end = s_.find('\n', start);
    if (end == std::string::npos) end = s_.size();
    std::string_view line(s_.data() + start, end - start);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string text = valid_utf8(utf8_prefix(line, 120));
    if (text.size() < line.size()) text += "...";
    result_.refused.push_back({line_at(start), std::move(text), std::move(reason)});
  }

  void quoted_name(std::size_t open, std::size_t close) {
    result_.quoted_names.emplace_back(offset_of_[open], offset_of_[close]);
  }

  void directive(std::size_t start) {
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
    // The rest of the line holds no directive, but its identifiers count (#if, #define); comments
    // and literals in it may still span lines.
    while (pos_ < s_.size() && s_[pos_] != '\n') {
      if (starts_with("/*")) {
        skip_block_comment();
      } else if (starts_with("//")) {
        skip_line_comment();
      } else if (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r') {
        ++pos_;
      } else {
        token();
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
    const std::size_t name_start = pos_;
    std::string header = s_.substr(pos_ + 1, name_end - pos_ - 1);
    pos_ = name_end + 1;
    skip_horizontal_space_and_comments();
    if (pos_ < s_.size() && s_[pos_] != '\n' && !starts_with("//")) {
      refuse(start, "unexpected text after the header name");
      return;
    }
    if (!header_allowed(header)) {
      refuse(start, header_refusal(header));
      return;
    }
    if (close == '"') quoted_name(name_start, name_end);
    result_.includes.push_back({line_at(start), header});
    result_.allowed.push_back(std::move(header));
  }

  const std::string& s_;
  const std::vector<int>& line_of_;
  const std::vector<std::size_t>& offset_of_;
  std::size_t pos_ = 0;
  IncludeScan result_;
};

}  // namespace

std::string_view without_byte_order_mark(std::string_view source) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  return source.starts_with(kBom) ? source.substr(kBom.size()) : source;
}

bool header_allowed(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-')) {
      return false;
    }
  }
  if (name.front() == '/' || name.front() == '.' || name.find("..") != std::string_view::npos ||
      name.find("//") != std::string_view::npos || name.find("/.") != std::string_view::npos) {
    return false;
  }
  const AllowedHeader* row = table_row(name);
  return row && row->kind != "refused";
}

std::span<const AllowedHeader> allowed_headers() { return kHeaderTable; }

std::string allowed_headers_text() {
  std::string text;
  for (std::string_view kind : {"cuda", "shim", "refused"}) {
    text += kind == "cuda"   ? "CUDA's own headers:\n"
            : kind == "shim" ? "Served by the judge (NVRTC has no C library):\n"
                             : "Not available (host-side code NVRTC cannot compile):\n";
    for (const auto& row : kHeaderTable) {
      if (row.kind != kind) continue;
      const std::string name =
          row.name.ends_with('/') ? fmt::format("<{}...>", row.name) : fmt::format("<{}>", row.name);
      text += fmt::format("  {:<28} {}\n", name, row.what);
    }
  }
  return text;
}

const std::vector<ShimHeader>& shim_headers() { return kShims; }

std::string angled_includes(std::string_view source, const IncludeScan& scan) {
  std::string text(source);
  for (const auto& [open, close] : scan.quoted_names) {
    if (close < text.size() && text[open] == '"' && text[close] == '"') {
      text[open] = '<';
      text[close] = '>';
    }
  }
  return text;
}

IncludeScan scan_includes(std::string_view source) {
  Logical logical = splice_lines(without_byte_order_mark(source));
  return DirectiveScanner(logical).run();
}

}  // namespace cudojo

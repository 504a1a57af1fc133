// Learner source is hostile: NVRTC opens any file an #include names and prints what it finds in its
// diagnostics (an include of a host file puts that file's first line in the log), and
// `__has_include("/any/path")` in an #if tells whether a host file exists. So every preprocessor
// directive that can pull in a file, and every way to reach `__has_include`, is found here, before
// NVRTC sees the source, and only names on the allowlist pass. The scan follows the C++ lexical
// rules that matter for finding directives (line splices, comments, string, raw-string and
// character literals, digit separators, digraphs) so that a directive cannot hide from it where the
// compiler would still obey it. The other half: the learner's "name" includes are compiled as
// <name> (angled_includes), so NVRTC looks only in CUDA's include folders and the shims below, never
// in the working directory.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudojo {

struct IncludeRefusal {
  int line = 0;  // 1-based line in the learner's file
  std::string text;
  std::string reason;
};

// One #include that passed, where the learner wrote it.
struct IncludeUse {
  int line = 0;
  std::string name;  // as written, without <> or ""
};

struct IncludeScan {
  std::vector<std::string> allowed;  // header names as written, e.g. "cstdio", "cub/block/block_reduce.cuh"
  std::vector<IncludeUse> includes;  // the same, with their lines
  std::vector<IncludeRefusal> refused;
  // Offsets in the scanned source of the two quotes around each header written "name" (in #include
  // and __has_include): angled_includes() turns them into <name>.
  std::vector<std::pair<std::size_t, std::size_t>> quoted_names;
  bool ok() const { return refused.empty(); }
};

// A UTF-8 byte-order mark at the very start of a source is not part of the program; NVRTC would
// read it as a stray token. Both the scan and the compile skip it (it is on line 1, so no line moves).
std::string_view without_byte_order_mark(std::string_view source);

IncludeScan scan_includes(std::string_view source);

// The source with every "name" the scan found written as <name>. NVRTC looks for a "name" first in
// the folder of the file that includes it, which for the learner's file (named without a folder) is
// the process's working directory; a <name> is looked for only in CUDA's folders and the shims.
// Same length, so no line or column moves. (--no-source-include would also stop CUDA's own headers
// from finding their neighbours: cooperative_groups/details/driver_abi.h includes "info.h".)
std::string angled_includes(std::string_view source, const IncludeScan& scan);

// Whether a header name (without <> or "") may be included by a submission.
bool header_allowed(std::string_view name);

// What a submission may include, as data for people: `cudojo show`, the lessons, the README and the
// refusal messages all print this one table. A name ending in '/' stands for every header under
// that folder (less the exceptions listed with kind "refused").
struct AllowedHeader {
  std::string_view name;  // "cooperative_groups.h", "cub/block/", "cstdio"
  std::string_view kind;  // "cuda" (CUDA's own), "shim" (served by the judge), "refused"
  std::string_view what;  // one line for learners
};
std::span<const AllowedHeader> allowed_headers();

// The table above as text, one header or folder a line: "  <cub/block/...>  BlockReduce, ...".
std::string allowed_headers_text();

// Headers NVRTC does not ship but learners write anyway; each maps to text served from memory
// (e.g. <cstdio> is empty because device printf needs no declaration under NVRTC).
struct ShimHeader {
  std::string_view name;
  std::string_view content;
};
const std::vector<ShimHeader>& shim_headers();

}  // namespace cudojo

// Learner source is hostile: NVRTC opens any file an #include names and prints what it finds in its
// diagnostics (an include of a host file puts that file's first line in the log). So every
// preprocessor directive that can pull in a file is found here, before NVRTC sees the source, and
// only names on the allowlist pass. The scan follows the C++ lexical rules that matter for finding
// directives (line splices, comments, string, raw-string and character literals, digit separators)
// so that a directive cannot hide from it where the compiler would still obey it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

struct IncludeRefusal {
  int line = 0;  // 1-based line in the learner's file
  std::string text;
  std::string reason;
};

struct IncludeScan {
  std::vector<std::string> allowed;  // header names as written, e.g. "cstdio", "cub/cub.cuh"
  std::vector<IncludeRefusal> refused;
  bool ok() const { return refused.empty(); }
};

IncludeScan scan_includes(std::string_view source);

// Whether a header name (without <> or "") may be included by a submission.
bool header_allowed(std::string_view name);

// Headers NVRTC does not ship but learners write anyway; each maps to text served from memory
// (e.g. <cstdio> is empty because device printf needs no declaration under NVRTC).
struct ShimHeader {
  std::string_view name;
  std::string_view content;
};
const std::vector<ShimHeader>& shim_headers();

}  // namespace cudojo

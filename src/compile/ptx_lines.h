// The learner's line for each instruction of a PTX module, read from its `.loc` directives. Code
// inlined from CUDA's headers (a cooperative-groups `block.sync()`, a CUB helper) carries the
// header's `.loc`, followed by `inlined_at` the place it was inlined into, which may itself be
// inlined; following that chain back to the learner's file names the learner's call, not CUDA's.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>

namespace cudojo {

class PtxLineTracker {
 public:
  // `learner_file`: the `.file` number of the learner's source.
  explicit PtxLineTracker(int learner_file) : learner_file_(learner_file) {}
  // Reads one line of PTX; a `.loc` moves the current line, a function's start resets it to 0.
  void see(std::string_view line);
  // The learner's line of the instructions that follow, or 0 (not the learner's, or unknown).
  unsigned current() const { return current_; }

 private:
  using Place = std::tuple<int, int, int>;  // file, line, column
  int learner_file_;
  unsigned current_ = 0;
  // Where each `.loc` seen in this function resolved to, so an `inlined_at` naming it resolves.
  std::map<Place, unsigned> resolved_;
};

// The `.file` number whose path is the learner's `file_name` (the path NVRTC prints ends with
// it). Of several that end so, one outside an `include` folder wins, as CUDA's headers live in
// one; 1 when none matches, which is where a single-file module puts its source.
int ptx_learner_file_index(std::string_view ptx, std::string_view file_name);

// Whether a source path another tool names (nvdisasm's line annotations, Nsight Compute's source
// page) is the learner's file: it ends with `file_name`, and is not in an include folder.
bool is_learner_path(std::string_view path, std::string_view file_name);

// `code` to put before an instruction guarded by `@guard` (or `@!guard` when `negated`): it runs
// only where the instruction will, by jumping over it to `label` elsewhere. Both rewrites of the
// check build count barriers and leaves this way.
std::string only_where_guard_holds(std::string_view guard, bool negated, std::string_view code,
                                   std::string_view label);

}  // namespace cudojo

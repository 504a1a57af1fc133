// Float atomics in a kernel's PTX, found without running it. A float atomic add lands in whatever
// order the threads reach memory, so a kernel that uses one cannot promise the same bits on every
// run, even when twenty runs on an idle GPU happen to agree. The deterministic-sum stage names
// every such line instead of hoping a run shows it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

struct FloatAtomicUse {
  std::string instruction;  // "atom.global.add.f32", "red.shared.add.f32", ...
  int line = 0;             // the learner's line (from the nearest `.loc` of the learner's file), or 0
};

// Every float atomic add in the entry `entry` and in the functions it calls (directly or not).
// `source_file_index`: the `.file` number of the learner's lines. Empty when the entry is not in
// the PTX.
std::vector<FloatAtomicUse> float_atomics_in_kernel(std::string_view ptx, std::string_view entry,
                                                    int source_file_index = 1);

}  // namespace cudojo

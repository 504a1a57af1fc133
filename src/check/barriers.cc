#include "check/barriers.h"

#include <fmt/format.h>

#include <algorithm>

#include "check/sanitizer.h"

namespace cudojo {

std::optional<Finding> divergent_barrier_finding(const BarrierCounts& counts) {
  if (counts.threads_per_block == 0 || counts.blocks == 0) return std::nullopt;
  const std::uint64_t per_block = counts.threads_per_block;

  // The first block whose threads disagree on how many barriers they passed.
  std::optional<std::string> uneven;
  const std::uint64_t recorded_blocks =
      std::min<std::uint64_t>(counts.blocks, counts.passes_per_thread.size() / per_block);
  for (std::uint64_t block = 0; block < recorded_blocks && !uneven; ++block) {
    const auto first = counts.passes_per_thread.begin() + static_cast<std::ptrdiff_t>(block * per_block);
    const auto [fewest, most] = std::minmax_element(first, first + static_cast<std::ptrdiff_t>(per_block));
    if (*fewest != *most) {
      uneven = fmt::format("in block {}, thread {} passed {} barrier{} and thread {} passed {}", block,
                           most - first, *most, *most == 1 ? "" : "s", fewest - first, *fewest);
    }
  }

  // The first line whose arrivals are not a whole number of blocks.
  std::optional<int> line;
  std::uint64_t line_arrivals = 0;
  for (std::size_t l = 1; l < counts.arrivals_per_line.size() && !line; ++l) {
    if (counts.arrivals_per_line[l] % per_block != 0) {
      line = static_cast<int>(l);
      line_arrivals = counts.arrivals_per_line[l];
    }
  }
  if (!uneven && !line) return std::nullopt;

  Finding finding;
  finding.code = std::string(finding_code::kDivergentBarrier);
  finding.line = line;
  const std::string where = line ? fmt::format("the __syncthreads() at line {}", *line) : "a __syncthreads()";
  std::string evidence =
      uneven ? *uneven
             : fmt::format("{} thread arrivals there, not a multiple of the block's {} threads",
                           line_arrivals, per_block);
  finding.message = fmt::format(
      "{} is reached by only part of the block ({}). A barrier must be reached by every thread of "
      "the block: put it where all threads pass, outside any `if` that depends on the thread and "
      "before any early return. Right sums do not make it right; the behaviour is undefined.",
      where, evidence);
  return finding;
}

}  // namespace cudojo

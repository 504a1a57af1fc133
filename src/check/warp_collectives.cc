#include "check/warp_collectives.h"

#include <fmt/format.h>

#include <vector>

namespace cudojo {

std::string describe_lanes(std::uint32_t lanes) {
  std::vector<std::string> runs;
  int count = 0;
  for (int lane = 0; lane < 32;) {
    if (!(lanes >> lane & 1u)) {
      ++lane;
      continue;
    }
    int last = lane;
    while (last + 1 < 32 && (lanes >> (last + 1) & 1u)) ++last;
    runs.push_back(last == lane ? fmt::format("{}", lane) : fmt::format("{}-{}", lane, last));
    count += last - lane + 1;
    lane = last + 1;
  }
  if (runs.empty()) return "no lanes";
  std::string text = count == 1 ? "lane " : "lanes ";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (i > 0) text += i + 1 == runs.size() ? " and " : ", ";
    text += runs[i];
  }
  return text;
}

namespace {

Finding gone_read_finding(const WarpMaskSighting& read) {
  Finding finding;
  finding.code = std::string(finding_code::kShuffleReadsGoneLane);
  if (read.line > 0) finding.line = static_cast<int>(read.line);
  finding.message = fmt::format(
      "The {}{} reads from a lane that left the kernel before it (in block {}, warp {}: {}), and the "
      "answer depends on what it read: in the judge's check, with that value replaced by a loud one, "
      "the answer came out wrong. A shuffle may only read a lane that executes it; a mask of the "
      "lanes still there, such as __activemask() after an early return, does not make the gone "
      "lane's value defined. Keep all 32 lanes running to the shuffle (a lane past N carries the "
      "identity, 0 for a sum) instead of returning early.",
      read.collective, read.line > 0 ? fmt::format(" at line {}", read.line) : "", read.block, read.warp,
      describe_lanes(read.gone_lanes));
  return finding;
}

}  // namespace

std::optional<Finding> gone_lanes_finding(const WarpMaskCounts& counts, std::optional<bool> answer_right) {
  std::optional<int> line;
  std::uint64_t sightings = 0;
  for (std::size_t l = 0; l < counts.sightings_per_line.size(); ++l) {
    sightings += counts.sightings_per_line[l];
    if (!line && l > 0 && counts.sightings_per_line[l] > 0) line = static_cast<int>(l);
  }
  if (sightings == 0 && !counts.first) {
    if (counts.first_gone_read && answer_right == false) return gone_read_finding(*counts.first_gone_read);
    return std::nullopt;
  }
  // The recorded first sighting names the line when it has one; else the first line counted.
  if (counts.first && counts.first->line > 0) line = static_cast<int>(counts.first->line);
  const std::string what = counts.first ? counts.first->collective : "a warp collective";
  const std::string where = line ? fmt::format("The {} at line {}", what, *line) : fmt::format("A {}", what);
  std::string evidence;
  if (counts.first) {
    evidence = fmt::format(" (in block {}, warp {}: {} had already returned)", counts.first->block,
                           counts.first->warp, describe_lanes(counts.first->gone_lanes));
  }
  Finding finding;
  finding.line = line;
  finding.code = std::string(finding_code::kMaskNamesGoneLanes);
  finding.message = fmt::format(
      "{} names in its mask lanes that left the kernel before it{}. Every lane the mask names must "
      "execute the same collective: keep all 32 lanes running to it (a lane past N carries the "
      "identity, 0 for a sum) instead of returning early, or pass a mask of only the lanes still "
      "there. What a lane reads from a gone lane is undefined, so a right sum today does not make "
      "it right.",
      where, evidence);
  return finding;
}

}  // namespace cudojo

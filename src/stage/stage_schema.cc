#include "stage/stage_schema.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace cudojo {

namespace {

using K = ValueKind;

// Defaults and allowed values are written as docs/stages.md shows them; the reader's own defaults
// are in Stage (stage.h) and must agree.
constexpr std::array kStageKeys = {
    KeySpec{"", "id", K::kString, true, "", "\"<track>/<number>\", the track being the stage's folder"},
    KeySpec{"", "slug", K::kString, true, "", "lowercase letters, digits and '-'"},
    KeySpec{"", "title", K::kString, true, "", ""},
    KeySpec{"", "summary", K::kString, true, "", ""},
    KeySpec{"", "contract", K::kString, true, "",
            "counter, one_accumulator, partial_per_block, two_kernel_sum, u64_sum, histogram, float_max"},
    KeySpec{"", "kernel", K::kString, true, "", "a C identifier the starters and references define"},
    KeySpec{"", "second_kernel", K::kString, false, "\"\"", "required by two_kernel_sum; else absent"},
    KeySpec{"", "launch", K::kTable, true, "", ""},
    KeySpec{"", "tests", K::kTable, false, "", ""},
    KeySpec{"", "gate", K::kTable, false, "rule = \"correctness\"", ""},
    KeySpec{"", "expect", K::kTable, false, "", ""},
    KeySpec{"launch", "threads_per_block", K::kInteger, true, "", "a multiple of 32, 32 .. 1024"},
    KeySpec{"launch", "dynamic_shared_bytes", K::kInteger, false, "0", ">= 0"},
    KeySpec{"launch", "blocks", K::kInteger, false, "ceil(N / threads_per_block)",
            "> 0; required by counter"},
    KeySpec{"launch", "blocks_per_sm", K::kInteger, false, "", "1 .. 32; not with blocks"},
    KeySpec{"tests", "sizes", K::kIntegers, false, "", "1 .. 2^30 each (required but for counter)"},
    KeySpec{"tests", "data", K::kStrings, false, "", "the contract's data sets (required but for counter)"},
    KeySpec{"tests", "performance_size", K::kInteger, false, "", "1 .. 2^30 (required but for counter)"},
    KeySpec{"tests", "runs", K::kInteger, false, "5", "2 .. 100"},
    KeySpec{"tests", "deterministic", K::kBoolean, false, "false", ""},
    KeySpec{"tests", "max_relative_error", K::kNumber, false, "", "strictly between 0 and 1"},
    KeySpec{"tests", "timing_data", K::kString, false,
            "the contract's exact data set, else the first of data", "one of the contract's data sets"},
    KeySpec{"gate", "rule", K::kString, false, "\"correctness\"", "correctness, time_ratio, baseline_ratio"},
    KeySpec{"gate", "max_time_ratio", K::kNumber, false, "2.0", "> 0; time_ratio and baseline_ratio only"},
    KeySpec{"gate", "min_sm_throughput_ratio", K::kNumber, false, "", "> 0; time_ratio only"},
    KeySpec{"gate", "baseline", K::kString, false, "",
            "\"cub_reduce\"; baseline_ratio only (required there)"},
    KeySpec{"expect", "starter", K::kString, false, "any verdict but accepted",
            "compile_error, runtime_error, time_limit_exceeded, wrong_answer, too_slow, accepted"},
};

constexpr std::array kCourseKeys = {
    KeySpec{"", "tracks", K::kStrings, false, "the track folders by name",
            "names of track folders, once each"},
};

constexpr std::array<std::string_view, 6> kExpectableVerdicts = {
    "compile_error", "runtime_error", "time_limit_exceeded", "wrong_answer", "too_slow", "accepted"};

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring letters ("rnus" -> "runs") each cost one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                       std::tolower(static_cast<unsigned char>(b[j - 1]))
                                   ? 0
                                   : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string KeySpec::qualified() const {
  return table.empty() ? std::string(name) : std::string(table) + "." + std::string(name);
}

std::span<const KeySpec> stage_file_keys() { return kStageKeys; }
std::span<const KeySpec> course_file_keys() { return kCourseKeys; }
std::span<const std::string_view> expectable_verdicts() { return kExpectableVerdicts; }

std::string_view kind_name(ValueKind kind) {
  switch (kind) {
    case K::kString:
      return "a string";
    case K::kInteger:
      return "an integer";
    case K::kNumber:
      return "a number";
    case K::kBoolean:
      return "a boolean (true or false)";
    case K::kIntegers:
      return "an array of integers";
    case K::kStrings:
      return "an array of strings";
    case K::kTable:
      break;
  }
  return "a table";
}

std::optional<std::string> closest_name(std::string_view typo, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    const std::size_t distance = edit_distance(typo, candidate);
    if (!best || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // Close enough to be a slip: one edit in a short name, a third of the letters in a longer one
  // ("threads_per_blok"); or one name inside the other ("threads" for "threads_per_block").
  const std::size_t allowed = std::max<std::size_t>(1, std::min(typo.size(), best ? best->size() : 0) / 3);
  if (best && best_distance <= allowed) return best;
  for (const auto& candidate : candidates) {
    if (typo.size() >= 3 && (candidate.starts_with(typo) || typo.starts_with(candidate))) return candidate;
  }
  return std::nullopt;
}

}  // namespace cudojo

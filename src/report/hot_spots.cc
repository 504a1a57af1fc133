#include "report/hot_spots.h"

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

namespace cudojo {

std::string describe_stall(std::string_view stall) {
  // Nsight Compute's warp-state names as its source page prints them, less the "stall_" prefix
  // (ncu 2025.3: long_sb, lg, mio, ...); the longer names of its metrics are read too.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 30> kWords{{
      {"long_sb", "waiting for a global or local memory load (long scoreboard)"},
      {"long_scoreboard", "waiting for a global or local memory load (long scoreboard)"},
      {"short_sb", "waiting for shared memory or a special function (short scoreboard)"},
      {"short_scoreboard", "waiting for shared memory or a special function (short scoreboard)"},
      {"drain", "finished, waiting for its writes to land (drain)"},
      {"lg", "the global memory queue is full (LG throttle)"},
      {"lg_throttle", "the global memory queue is full (LG throttle)"},
      {"mio", "the shared memory and special instruction queue is full (MIO throttle)"},
      {"mio_throttle", "the shared memory and special instruction queue is full (MIO throttle)"},
      {"barrier", "waiting at a barrier for the rest of the block (barrier)"},
      {"membar", "waiting at a memory fence (membar)"},
      {"wait", "a fixed-latency dependency (wait)"},
      {"math", "the arithmetic unit is busy (math pipe throttle)"},
      {"math_pipe_throttle", "the arithmetic unit is busy (math pipe throttle)"},
      {"tex", "the texture unit is busy (tex throttle)"},
      {"tex_throttle", "the texture unit is busy (tex throttle)"},
      {"branch_resolving", "waiting for a branch target (branch resolving)"},
      {"no_inst", "no instruction fetched yet (no instructions)"},
      {"no_instructions", "no instruction fetched yet (no instructions)"},
      {"imc", "waiting for the constant cache (IMC miss)"},
      {"imc_miss", "waiting for the constant cache (IMC miss)"},
      {"dispatch", "the dispatcher held it back (dispatch stall)"},
      {"dispatch_stall", "the dispatcher held it back (dispatch stall)"},
      {"not_selected", "ready, another warp was picked (not selected)"},
      {"selected", "issuing an instruction (selected)"},
      {"sleep", "sleeping (nanosleep or a yield)"},
      {"sleeping", "sleeping (nanosleep or a yield)"},
      {"misc", "a miscellaneous hold (misc)"},
      {"gmma", "waiting for a warpgroup matrix operation (GMMA)"},
      {"branch_target", "waiting for a branch target"},
  }};
  for (const auto& [name, words] : kWords)
    if (name == stall) return std::string(words);
  return std::string(stall);
}

void to_json(nlohmann::json& j, const HotLine& line) {
  j = {{"line", line.line},
       {"text", line.text},
       {"samples", line.samples},
       {"share", line.share},
       {"instructions", line.instructions},
       {"stall", line.stall},
       {"stall_words", describe_stall(line.stall)},
       {"stall_share", line.stall_share}};
}

void from_json(const nlohmann::json& j, HotLine& line) {
  line.line = j.value("line", 0u);
  line.text = j.value("text", "");
  line.samples = j.value("samples", std::int64_t{0});
  line.share = j.value("share", 0.0);
  line.instructions = j.value("instructions", std::int64_t{0});
  line.stall = j.value("stall", "");
  line.stall_share = j.value("stall_share", 0.0);
}

void to_json(nlohmann::json& j, const HotSpots& hot_spots) {
  j = {{"lines", hot_spots.lines},
       {"samples", hot_spots.samples},
       {"drain_samples", hot_spots.drain_samples},
       {"note", hot_spots.note},
       {"ms", hot_spots.ms}};
}

void from_json(const nlohmann::json& j, HotSpots& hot_spots) {
  hot_spots.lines = j.value("lines", std::vector<HotLine>{});
  hot_spots.samples = j.value("samples", std::int64_t{0});
  hot_spots.drain_samples = j.value("drain_samples", std::int64_t{0});
  hot_spots.note = j.value("note", "");
  hot_spots.ms = j.value("ms", 0.0);
}

}  // namespace cudojo

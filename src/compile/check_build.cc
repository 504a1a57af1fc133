#include "compile/check_build.h"

#include "compile/ptx_barriers.h"
#include "compile/ptx_planting.h"
#include "compile/ptx_warp_collectives.h"

namespace cudojo {

std::optional<std::string> judge_name_in_module(std::string_view ptx) {
  for (const char* name :
       {kBarrierPassesSymbol, kBarrierLinesSymbol, kBarrierShapeSymbol, kWarpGoneSymbol, kWarpMaskLinesSymbol,
        kWarpMaskRecordSymbol, kPlantedPatternSymbol, kPlantedDynamicSymbol}) {
    if (ptx.find(name) != std::string_view::npos) return std::string(name);
  }
  return std::nullopt;
}

std::optional<CheckBuild> make_check_build(std::string_view ptx, int learner_file) {
  auto barriers = instrument_ptx_barriers(ptx, learner_file);
  if (!barriers) return std::nullopt;
  auto collectives = instrument_ptx_warp_collectives(barriers->ptx, learner_file);
  if (!collectives) return std::nullopt;
  return CheckBuild{std::move(collectives->ptx), barriers->barriers, collectives->collectives};
}

}  // namespace cudojo

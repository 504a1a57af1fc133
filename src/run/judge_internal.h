// What run/judge.cc and run/prepared_workers.cc share and nothing else needs.
#pragma once

#include "run/judge.h"
#include "run/tools.h"

namespace cudojo {

// The tool workers' settings (compute-sanitizer, ncu) from a slot's worker settings.
ToolSettings tool_settings(const WorkerSettings& settings);

}  // namespace cudojo

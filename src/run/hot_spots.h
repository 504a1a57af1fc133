// Hot spots of a kernel that passed the tests (issue #28), and the Nsight Compute report they come
// from. ncu is wrapped around a worker that launches the submission once at the performance size
// (WorkerMode::kLaunchForNcu, launch_submission_only), with the GPU alone as every profile has it,
// collecting the source counters and warp-state samples (or every section, when a take-home report
// is asked for) with the learner's source imported into the report. The report's source page,
// per line of the learner's file, then gives report/hot_spots.h's figures.
//
// Bounded like every tool run: a budget (JudgeLimits::hot_spots_budget_ms) for the profile and
// the reading back together, the worker's own deadlines inside, and nothing it finds or fails
// to find changes the verdict.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "report/hot_spots.h"
#include "run/gpu_lease.h"
#include "run/protocol.h"
#include "run/tools.h"

namespace cudojo {

// Reads `ncu --page source --csv --print-source cuda,sass` of a report: the line rows of the learner's
// file (the path ending with `file_name`), their samples and stall reasons, with the samples of warps
// draining at exit charged to the lines that write global memory. `source` gives each line's text.
HotSpots hot_spots_from_source_page(std::string_view csv, std::string_view file_name,
                                    std::string_view source);

struct HotSpotsRequest {
  Job launch_job;  // the check's job (builds given), switched to kLaunchForNcu here
  // Where to keep the whole report (an .ncu-rep file); empty: keep none, and collect only the
  // sections the hot spots need.
  std::string report_path;
  GpuLease* lease = nullptr;
  // Called once the GPU is alone, before Nsight Compute starts: the GPU's profiling process, which
  // keeps the counters, is let go there (run/gpu_profiler.h).
  std::function<void()> free_counters;
};

struct HotSpotsResult {
  HotSpots hot_spots;
  bool report_kept = false;
  std::uint64_t report_bytes = 0;
  std::string report_note;  // why no report was kept, when one was asked for
};

HotSpotsResult collect_hot_spots(const ToolSettings& settings, const HotSpotsRequest& request);

}  // namespace cudojo

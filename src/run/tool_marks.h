// Where one job's part ends in a kept sanitizer worker's log. A kept worker runs job after job
// under one compute-sanitizer process, whose log grows across them; after each job's launch the
// worker leaves a mark its tool reports, and the parent cuts the log at the mark's report. Each tool
// reports something different, so each has its own mark (what its H200 runs showed:
// evidence/2026-12-02-h200-sanitizer-marks.txt):
//   memcheck   the report of one CUDA call the worker makes to fail on purpose;
//   racecheck  the hazard report of a kernel whose threads all write one shared word, named for
//              this worker alone with a random name, which no learner's kernel can carry;
//   synccheck  none: it reports no failed call, and every error it reports kills the launch. Its
//              reports are in the log when the synchronization after the launch returns, so the
//              log as it stands at the result is the job's; a job whose part holds any report
//              lets its worker go, and the rest of the log is read at its exit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cudojo {

class GpuSession;

// memcheck's mark: its report of the failed call names the call.
inline constexpr const char* kFailedCallMark = "on CUDA API call to cudaFuncGetAttributes";

// A new mark for a worker under `tool` (empty: the tool needs none).
std::string new_tool_mark(std::string_view tool);

// Where the report of `mark` begins in `log` (the start of its first line), if it is there: the
// line must open a report ("Program hit", "Race reported"), not merely mention the mark.
std::optional<std::size_t> find_tool_log_mark(const std::string& log, const std::string& mark);

// Whether `part` of a log holds any report (a line of the tool's other than its banner).
bool tool_log_has_report(std::string_view part);

// `log` without the reports of `mark` (each from its first line to the line that closes it). A log
// read whole (its mark came late, or its worker was let go) must not pass the judge's own hazard
// to the parser as the learner's.
std::string without_tool_mark_reports(const std::string& log, const std::string& mark);

// The worker's side, at start-up: builds its mark's kernel (racecheck), so that a failure to build
// it is not met after a learner's launch, and its compile is not on a job's clock.
void prepare_tool_log_mark(const GpuSession& gpu);

// The worker's side, after its launch: leaves the mark its environment names (env::kToolName,
// env::kToolMark). A mark it cannot leave is simply missing: the parent then stops keeping this
// tool's workers.
void leave_tool_log_mark(GpuSession& gpu);

}  // namespace cudojo

// A stage's version: one digest of everything that can change a verdict on it. Every job records
// the version it was judged under (Report::stage_version), so an instructor sees which verdicts
// came from an older stage and can judge them again (serve/rejudging.h).
//
// The digest covers:
//   - the stage's files that judge: stage.toml and the reference in every language (the lesson and
//     the starters teach, but never judge, so a typo fixed in a lesson keeps every verdict current);
//   - the contract's data generator (check/datasets.h kDataGeneratorVersion);
//   - the calibration figures of this stage in every calibration file of the folder (by GPU), so a
//     recalibrated GPU marks its stage's older verdicts; the version does not depend on which GPU
//     judged, and any node computes it without one;
//   - the judge's own rules (kJudgeRulesVersion below).
#pragma once

#include <filesystem>
#include <string>

#include "report/report.h"
#include "stage/stage.h"

namespace cudojo {

// Raise it with any change to the checks, the timing rules or the gate that can change a verdict
// on an unchanged kernel and stage (a new finding, a stricter tolerance, another timing method).
inline constexpr int kJudgeRulesVersion = 1;

// Reads the stage's files from stage.directory and the calibration folder (empty: none). A file
// that cannot be read counts as absent, which gives a different digest than its content would.
StageVersion compute_stage_version(const Stage& stage, const std::filesystem::path& calibration_dir);

}  // namespace cudojo

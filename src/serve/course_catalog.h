// The course a server judges with, replaceable while it runs: `cudojo serve` loads it at start and
// again on SIGHUP or an administrator's POST /api/admin/course/reload. A course that does not load
// whole (any stage broken) is refused, and the one in use stays. Each load computes every stage's
// version (run/stage_version.h) from the files as they were read, so a file edited on disk after
// the load is not claimed by jobs judged before the next one.
//
// Readers take a snapshot (current()) and keep it for as long as they use its stages: a job being
// judged when the course is replaced finishes under the course it started with.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report.h"
#include "serve/markdown.h"
#include "stage/stage.h"

namespace cudojo {

struct LoadedCourse {
  std::vector<Stage> stages;
  std::map<std::string, StageVersion> versions;  // by stage id
  // The calibration files (calibration/<gpu-slug>.json) as read with the course, by slug: the
  // lessons' figures come from them (serve/markdown.h). A file that does not parse is left out.
  std::map<std::string, nlohmann::json> calibrations;
  double loaded_at = 0;  // seconds since the epoch
  int generation = 1;    // 1 at start, then one more per reload taken
};

struct CourseReload {
  bool replaced = false;
  std::string message;                // one sentence for the operator
  std::vector<std::string> problems;  // why it was refused: file and reason, one each
  std::vector<std::string> changed;   // stage ids whose version changed (or that were added)
  std::vector<std::string> removed;   // stage ids no longer in the course
};

class CourseCatalog {
 public:
  CourseCatalog(std::filesystem::path course_root, std::filesystem::path calibration_dir,
                std::vector<Stage> stages);

  std::shared_ptr<const LoadedCourse> current() const;
  // The lessons' figure sources for a reader judged on `judging_gpu` ("" when no GPU judges here),
  // pointing into `course`, which the caller keeps.
  static LessonFigureSources figure_sources(const LoadedCourse& course, const std::string& judging_gpu);
  // Loads the course folder again; replaces the one in use only when every stage loads.
  CourseReload reload();
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
  std::filesystem::path calibration_dir_;
  mutable std::mutex mutex_;
  std::mutex reloading_;  // one reload at a time
  std::shared_ptr<const LoadedCourse> current_;
};

}  // namespace cudojo

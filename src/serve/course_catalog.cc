#include "serve/course_catalog.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>

#include "gate/calibration.h"
#include "run/stage_version.h"

namespace cudojo {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Every *.json in the calibration folder, parsed, by file name (a GPU's slug).
std::map<std::string, nlohmann::json> read_calibrations(const std::filesystem::path& dir) {
  std::map<std::string, nlohmann::json> files;
  std::error_code error;
  if (dir.empty() || !std::filesystem::is_directory(dir, error)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    nlohmann::json file = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (file.is_object()) files[entry.path().stem().string()] = std::move(file);
  }
  return files;
}

std::shared_ptr<const LoadedCourse> make_loaded(std::vector<Stage> stages,
                                                const std::filesystem::path& calibration, int generation) {
  auto loaded = std::make_shared<LoadedCourse>();
  for (const Stage& stage : stages) loaded->versions[stage.id] = compute_stage_version(stage, calibration);
  loaded->stages = std::move(stages);
  loaded->calibrations = read_calibrations(calibration);
  loaded->loaded_at = now_seconds();
  loaded->generation = generation;
  return loaded;
}

}  // namespace

CourseCatalog::CourseCatalog(std::filesystem::path course_root, std::filesystem::path calibration_dir,
                             std::vector<Stage> stages)
    : root_(std::move(course_root)),
      calibration_dir_(std::move(calibration_dir)),
      current_(make_loaded(std::move(stages), calibration_dir_, 1)) {}

LessonFigureSources CourseCatalog::figure_sources(const LoadedCourse& course,
                                                  const std::string& judging_gpu) {
  LessonFigureSources sources;
  sources.judging_gpu = judging_gpu;
  auto file_for = [&course](const std::string& gpu) -> const nlohmann::json* {
    const auto found = course.calibrations.find(gpu_slug(gpu));
    return found == course.calibrations.end() ? nullptr : &found->second;
  };
  if (!judging_gpu.empty()) sources.judging_calibration = file_for(judging_gpu);
  sources.example_calibration = file_for(kExampleCalibrationGpu);
  return sources;
}

std::shared_ptr<const LoadedCourse> CourseCatalog::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

CourseReload CourseCatalog::reload() {
  std::lock_guard one_at_a_time(reloading_);
  CourseReload result;
  const auto before = current();
  std::vector<Stage> stages;
  try {
    Course course = load_course_report(root_);
    for (const BrokenStage& broken : course.broken)
      result.problems.push_back(fmt::format("{} is broken: {}", broken.label(), broken.reason()));
    stages = std::move(course.stages);
  } catch (const StageError& error) {
    result.problems.push_back(error.what());
  }
  if (stages.empty() && result.problems.empty()) result.problems.push_back("the course has no stage");
  if (!result.problems.empty()) {
    result.message = fmt::format(
        "the course in {} was refused ({} problem{}); the one loaded at start or at the "
        "last reload stays in use",
        root_.string(), result.problems.size(), result.problems.size() == 1 ? "" : "s");
    return result;
  }
  auto loaded = make_loaded(std::move(stages), calibration_dir_, before->generation + 1);
  for (const auto& [id, version] : loaded->versions) {
    const auto old = before->versions.find(id);
    if (old == before->versions.end() || old->second.digest != version.digest) result.changed.push_back(id);
  }
  for (const auto& [id, version] : before->versions) {
    if (!loaded->versions.count(id)) result.removed.push_back(id);
  }
  const std::size_t count = loaded->stages.size();
  {
    std::lock_guard lock(mutex_);
    current_ = std::move(loaded);
  }
  result.replaced = true;
  result.message = fmt::format("course reloaded from {}: {} stages, {} changed, {} removed", root_.string(),
                               count, result.changed.size(), result.removed.size());
  return result;
}

}  // namespace cudojo

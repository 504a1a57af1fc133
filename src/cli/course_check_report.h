// What `cudojo course check` found (course_check.cc gathers it) and its two reports: the text a
// course author reads, grouped by stage, and the JSON object docs/stages.md documents.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "stage/language.h"
#include "stage/stage.h"

namespace cudojo::cli {

struct Compiled {
  std::filesystem::path file;
  Language language = Language::kCuda;
  std::string role;  // "starter" or "reference"
  bool ok = false;
  double compile_ms = 0;
};

struct Judged {
  std::filesystem::path file;
  Language language = Language::kCuda;
  std::string role, expected, verdict, message;
  bool ok = false;
};

// A problem and the check that found it: stage_file, missing_file, kernel_name, compile, lesson,
// todo, gpu_verdict (docs/stages.md).
struct Finding {
  StageProblem problem;
  std::string check;
};

// One stage folder's findings, good or broken.
struct Entry {
  std::string id;
  std::filesystem::path directory;
  const Stage* stage = nullptr;  // nullptr: broken
  std::vector<Finding> problems;
  std::vector<Compiled> compiled;
  std::vector<Judged> judged;
};

struct Toolchain {
  bool ok = true;
  std::string reason;  // why the language is skipped
};

struct CourseCheckResult {
  std::filesystem::path root;  // absolute
  bool gpu = false;
  std::vector<Finding> course_problems;  // course.toml, languages/*.md
  std::vector<Entry> entries;
  std::map<Language, Toolchain> tools;
  unsigned threads = 1;  // the compile pool
  double wall_ms = 0;
};

struct CourseCheckCounts {
  int errors = 0, warnings = 0, todos = 0, compiled = 0, broken = 0, judged = 0;
};

CourseCheckCounts count_findings(const CourseCheckResult& result);
nlohmann::json course_check_json(const CourseCheckResult& result);
std::string course_check_text(const CourseCheckResult& result);

}  // namespace cudojo::cli

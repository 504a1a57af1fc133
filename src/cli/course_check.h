// `cudojo course check`: everything a course author can get wrong, found before a learner does.
// Without a GPU (so CI runs it): every stage file read strictly, every starter and reference
// compiled in every language present (NVRTC; Numba and rustc in the sandbox), which checks the
// kernels' names and signatures, every lesson rendered as the page renders it (links, math,
// diagrams, code fences), and the TODO(author) markers `cudojo stage new` left. With --gpu, on a GPU
// machine: every reference judged (it must be accepted) and every starter (it must get the verdict
// its stage declares). Problems are reported by stage, at file:line; docs/stages.md gives the JSON.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudojo::cli {

struct CourseCheckRequest {
  std::filesystem::path course_root;
  std::vector<std::string> only;  // stage ids, aliases or folders; empty: every stage
  bool gpu = false;
  bool json = false;
};

// 0 clean (warnings allowed), 1 problems, 2 no GPU for --gpu. Throws UsageError for an unknown stage
// or a course folder that does not exist.
int run_course_check(const CourseCheckRequest& request);

}  // namespace cudojo::cli

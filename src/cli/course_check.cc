#include "cli/course_check.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "cli/cli_common.h"
#include "cli/course_check_report.h"
#include "common/json_text.h"
#include "compile/frontend.h"
#include "compile/nvrtc_compiler.h"
#include "compile/sandbox.h"
#include "gate/calibration.h"
#include "run/build.h"
#include "run/judge.h"
#include "serve/markdown.h"
#include "serve/server.h"
#include "stage/authoring_checks.h"
#include "stage/kernel_scan.h"
#include "stage/stage.h"

namespace cudojo::cli {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// What each language needs here, as `cudojo toolchains` reports it: a language that cannot be
// compiled on this machine is skipped with the reason, never counted as the course's failure.
std::map<Language, Toolchain> find_toolchains(const std::set<Language>& wanted) {
  std::map<Language, Toolchain> found;
  const bool sandbox = !find_bubblewrap().empty();
  for (const Language language : wanted) {
    Toolchain& tool = found[language];
    if (language == Language::kCuda) continue;
    if (!sandbox) {
      tool = {false,
              "bubblewrap is missing (apt install bubblewrap): Python and Rust compile in its sandbox"};
    } else if (language == Language::kPython &&
               !(fs::exists("/usr/bin/python3") && fs::exists("/usr/lib/python3/dist-packages/numba"))) {
      tool = {false, "Numba is missing: apt install python3-numba"};
    } else if (language == Language::kRust) {
      std::string error;
      if (!prepare_rust_sysroot("sm_90", error)) tool = {false, error};
    }
  }
  return found;
}

// Which check found a problem of the stage's loading (stage_folder.cc), by its file.
std::string loading_check(const StageProblem& problem) {
  const std::string name = problem.file.filename().string();
  if (problem.message.starts_with(name + " is missing")) return "missing_file";
  if (name == "stage.toml" || name == "course.toml") return "stage_file";
  return "kernel_name";
}

std::vector<Finding> findings(std::vector<StageProblem> problems, const std::string& check = "") {
  std::vector<Finding> found;
  for (auto& problem : problems) {
    const std::string kind = check.empty() ? loading_check(problem) : check;
    found.push_back({std::move(problem), kind});
  }
  return found;
}

void add(std::vector<Finding>& into, std::vector<Finding> more) {
  for (auto& finding : more) into.push_back(std::move(finding));
}

// The line of the kernel a compile message is about (it names it), from the source's text; else 0.
int kernel_line(const Stage& stage, Language language, const std::string& source,
                const std::string& message) {
  for (const std::string& name : {stage.kernel, stage.second_kernel}) {
    if (name.empty() || message.find(name) == std::string::npos) continue;
    for (const auto& kernel : find_kernel_definitions(language, source)) {
      if (kernel.name == name) return kernel.line;
    }
  }
  return 0;
}

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Every starter and reference of the good stages, `cudojo build` style, on a small pool (at most
// one compile per usable CPU): NVRTC for CUDA C++, the sandboxed front end for Python and Rust.
// The compile checks the kernels' names and parameter types against the contract.
void compile_all(std::vector<Entry>& entries, const std::map<Language, Toolchain>& tools, unsigned& threads) {
  struct Job {
    Entry* entry;
    Language language;
    std::string role;
    const std::string* source;
    Compiled result;
    std::vector<Finding> problems;
  };
  std::vector<Job> jobs;
  for (Entry& entry : entries) {
    if (!entry.stage) continue;
    for (const Language language : all_languages()) {
      if (!tools.at(language).ok) continue;
      for (const char* role : {"starter", "reference"}) {
        const std::string* source = std::string_view(role) == "starter" ? entry.stage->starter(language)
                                                                        : entry.stage->reference(language);
        if (source) jobs.push_back({&entry, language, role, source, {}, {}});
      }
    }
  }
  const std::string include_dir = default_cuda_include_dir();
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k = next++; k < jobs.size(); k = next++) {
      Job& job = jobs[k];
      const std::string file_name = job.role + std::string(source_extension(job.language));
      const fs::path file = job.entry->directory / file_name;
      job.result = {file, job.language, job.role, false, 0};
      BuildRequest request;
      request.stage = job.entry->stage;
      request.language = job.language;
      request.source = *job.source;
      request.file_name = file_name;
      request.cuda_include_dir = include_dir;
      try {
        const SubmissionBuild build = build_submission(request);
        job.result.ok = build.compile.ok;
        job.result.compile_ms = build.compile.compile_ms;
        for (const Diagnostic& d : build.compile.diagnostics) {
          const bool error = d.severity.find("error") != std::string::npos;
          if (!error && d.severity != "warning") continue;
          const bool here = d.file == file_name;
          // A signature the compiler refuses after reading the file (the mangled-name check) names
          // no line: point at the kernel's definition, which is what must change.
          const int line = !here ? 0
                           : d.line == 0
                               ? kernel_line(*job.entry->stage, job.language, *job.source, d.message)
                               : d.line;
          job.problems.push_back(
              {{file, line, "", fmt::format("{}{}: {}", here ? "" : d.file + ": ", d.severity, d.message),
                !error},
               "compile"});
        }
        if (!build.compile.ok && build.compile.diagnostics.empty()) {
          job.problems.push_back({{file, 0, "", "does not compile: " + build.compile.log}, "compile"});
        }
      } catch (const std::exception& failure) {
        job.problems.push_back(
            {{file, 0, "", std::string("the judge could not compile it: ") + failure.what()}, "compile"});
      }
    }
  };
  threads =
      std::clamp<unsigned>(static_cast<unsigned>(std::min<std::size_t>(usable_cpus(), jobs.size())), 1, 16);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  for (Job& job : jobs) {
    job.entry->compiled.push_back(job.result);
    for (auto& problem : job.problems) job.entry->problems.push_back(std::move(problem));
  }
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every reference must be accepted and every starter must get the verdict its stage declares (or
// any verdict but accepted), in every language, judged as `cudojo check` judges.
void judge_all(std::vector<Entry>& entries, const std::map<Language, Toolchain>& tools,
               const fs::path& course_root) {
  const std::string calibration = default_calibration_dir(course_root).string();
  for (Entry& entry : entries) {
    if (!entry.stage) continue;
    const bool compiled =
        std::all_of(entry.compiled.begin(), entry.compiled.end(), [](auto& c) { return c.ok; });
    if (!compiled) continue;  // its compile errors are reported already
    for (const Language language : all_languages()) {
      if (!tools.at(language).ok) continue;
      for (const char* role : {"reference", "starter"}) {
        const bool reference = std::string_view(role) == "reference";
        const std::string* source =
            reference ? entry.stage->reference(language) : entry.stage->starter(language);
        if (!source) continue;
        const std::string file_name = role + std::string(source_extension(language));
        std::cerr << fmt::format("cudojo course check: judging {} {}\n", entry.id, file_name);
        CheckRequest request;
        request.stage = entry.stage;
        request.source = *source;
        request.file_name = file_name;
        request.language = language;
        request.workers.worker_executable = self_executable();
        request.cuda_include_dir = default_cuda_include_dir();
        request.calibration_dir = calibration;
        const Report report = run_check(request);
        Judged judged{entry.directory / file_name,
                      language,
                      role,
                      "",
                      std::string(to_string(report.verdict)),
                      report.message,
                      false};
        const std::string& declared = entry.stage->expected_starter_verdict;
        judged.expected = reference ? "accepted" : declared.empty() ? "not accepted" : declared;
        judged.ok = reference || !declared.empty()
                        ? judged.verdict == judged.expected
                        : is_learner_verdict(report.verdict) && report.verdict != Verdict::kAccepted;
        if (!judged.ok) {
          entry.problems.push_back({{judged.file, 0, "",
                                     fmt::format("judged {}, but the stage expects {}: {}", judged.verdict,
                                                 judged.expected, report.message)},
                                    "gpu_verdict"});
        }
        entry.judged.push_back(std::move(judged));
      }
    }
  }
}

}  // namespace

int run_course_check(const CourseCheckRequest& request) {
  const auto started = Clock::now();
  const fs::path root = fs::absolute(request.course_root).lexically_normal();
  if (!fs::is_directory(root)) {
    throw UsageError(fmt::format("course folder {} does not exist (give --course DIR)", root.string()));
  }
  if (request.gpu) {
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess || devices == 0) {
      return fail(
          request.json, "no_device",
          fmt::format("course check --gpu judges every reference and starter on a GPU, and this machine "
                      "has none ({}); without --gpu it checks everything that needs none",
                      status == cudaSuccess ? "no CUDA device" : cudaGetErrorName(status)));
    }
  }
  CourseCheckResult result;
  result.root = root;
  result.gpu = request.gpu;
  std::vector<Finding>& course_problems = result.course_problems;
  std::vector<Entry>& entries = result.entries;
  Course course;
  try {
    course = load_course_report(root);
  } catch (const StageError& error) {
    course_problems = findings(error.problems());
    if (course_problems.empty()) course_problems = findings({{root / "course.toml", 0, "", error.what()}});
  }
  for (const Stage& stage : course.stages) entries.push_back({stage.id, stage.directory, &stage, {}, {}, {}});
  for (const BrokenStage& broken : course.broken) {
    entries.push_back({broken.label(), broken.directory, nullptr, findings(broken.problems), {}, {}});
  }
  if (!request.only.empty()) {
    std::vector<Entry> chosen;
    for (const std::string& wanted : request.only) {
      const Stage* good = find_stage(course.stages, wanted);
      const BrokenStage* broken = good ? nullptr : course.find_broken(wanted);
      const auto found = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) {
        return (good && e.stage == good) || (broken && e.directory == broken->directory);
      });
      if (found == entries.end())
        throw UsageError(fmt::format("course check: no stage '{}' in {}", wanted, root.string()));
      chosen.push_back(*found);
    }
    entries = std::move(chosen);
  }

  std::set<Language> wanted{Language::kCuda};
  for (const Entry& entry : entries) {
    for (const Language language : all_languages()) {
      if (entry.stage && entry.stage->starter(language)) wanted.insert(language);
    }
  }
  result.tools = find_toolchains(wanted);
  compile_all(entries, result.tools, result.threads);

  const auto diagrams = page_diagrams(default_web_dir());
  for (Entry& entry : entries) {
    const fs::path lesson = entry.directory / "lesson.md";
    if (fs::exists(lesson)) {
      add(entry.problems,
          findings(check_lesson(read_text(lesson), {lesson, markdown_to_html, diagrams}), "lesson"));
    }
    add(entry.problems, findings(find_author_todos(entry.directory), "todo"));
  }
  if (request.only.empty()) {
    std::error_code error;
    for (const auto& page : fs::directory_iterator(root / "languages", error)) {
      if (page.path().extension() != ".md") continue;
      add(course_problems,
          findings(check_lesson(read_text(page.path()), {page.path(), markdown_to_html, diagrams}),
                   "lesson"));
    }
  }
  if (request.gpu) judge_all(entries, result.tools, root);

  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (request.json) {
    std::cout << json_text(course_check_json(result), 2) << "\n";
  } else {
    std::cout << course_check_text(result);
  }
  return count_findings(result).errors == 0 ? 0 : 1;
}

}  // namespace cudojo::cli

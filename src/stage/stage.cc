#include "stage/stage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/environment.h"
#include "common/limits.h"
#include "stage/contract_info.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StageError(fmt::format("{}: cannot be read", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename T>
T required(const toml::table& table, std::string_view key, const fs::path& file) {
  auto value = table[key].value<T>();
  if (!value) {
    throw StageError(fmt::format("{}: field '{}' is missing or has the wrong type", file.string(), key));
  }
  return *value;
}

void validate(const Stage& stage, const fs::path& file) {
  auto fail = [&](std::string_view what) { throw StageError(fmt::format("{}: {}", file.string(), what)); };
  if (stage.id.find('/') == std::string::npos) fail("id must look like '<track>/<number>'");
  if (!find_contract_info(stage.contract)) {
    fail(fmt::format("contract '{}' is not one the judge implements", stage.contract));
  }
  const StageBounds& bounds = kStageBounds;
  if (stage.launch.threads_per_block <= 0 || stage.launch.threads_per_block > bounds.max_threads_per_block ||
      stage.launch.threads_per_block % bounds.warp_size != 0) {
    fail(fmt::format("launch.threads_per_block must be a multiple of {} between {} and {}", bounds.warp_size,
                     bounds.warp_size, bounds.max_threads_per_block));
  }
  if (stage.launch.dynamic_shared_bytes < 0) fail("launch.dynamic_shared_bytes must be >= 0");
  if (stage.contract == "counter") {
    if (!stage.launch.fixed_blocks || *stage.launch.fixed_blocks <= 0) {
      fail("the counter contract needs launch.blocks > 0");
    }
  } else {
    if (stage.test_sizes.empty()) fail("tests.sizes must list at least one size");
    for (auto n : stage.test_sizes) {
      if (n <= 0 || n > bounds.max_size)
        fail(fmt::format("tests.sizes must lie in 1 .. {}", bounds.max_size));
    }
    if (stage.performance_size <= 0 || stage.performance_size > bounds.max_size) {
      fail(fmt::format("tests.performance_size must lie in 1 .. {}", bounds.max_size));
    }
    for (const auto& data : stage.data_sets) {
      if (data != "exact" && data != "fractional" && data != "random_signed") {
        fail(fmt::format("unknown data set '{}' (exact, fractional, random_signed)", data));
      }
    }
    if (std::find(stage.data_sets.begin(), stage.data_sets.end(), "exact") == stage.data_sets.end()) {
      fail("tests.data must include 'exact': poisoning and determinism are judged on it");
    }
  }
  if (stage.runs < bounds.min_runs || stage.runs > bounds.max_runs) {
    fail(fmt::format("tests.runs must lie in {} .. {}", bounds.min_runs, bounds.max_runs));
  }
  if (stage.gate.rule == GateRule::kTimeRatio && stage.gate.max_time_ratio <= 0) {
    fail("gate.max_time_ratio must be > 0");
  }
}

}  // namespace

std::string to_string(GateRule rule) { return rule == GateRule::kTimeRatio ? "time_ratio" : "correctness"; }

Stage load_stage(const fs::path& directory) {
  const fs::path file = directory / "stage.toml";
  toml::table table;
  try {
    table = toml::parse_file(file.string());
  } catch (const toml::parse_error& error) {
    throw StageError(fmt::format("{}:{}: {}", file.string(), error.source().begin.line, error.description()));
  }

  Stage stage;
  stage.directory = directory;
  stage.id = required<std::string>(table, "id", file);
  stage.slug = required<std::string>(table, "slug", file);
  stage.title = required<std::string>(table, "title", file);
  stage.summary = required<std::string>(table, "summary", file);
  stage.contract = required<std::string>(table, "contract", file);
  stage.kernel = required<std::string>(table, "kernel", file);

  const toml::table* launch = table["launch"].as_table();
  if (!launch) throw StageError(fmt::format("{}: table [launch] is missing", file.string()));
  stage.launch.threads_per_block = required<int>(*launch, "threads_per_block", file);
  stage.launch.dynamic_shared_bytes = (*launch)["dynamic_shared_bytes"].value_or(0);
  if (auto blocks = (*launch)["blocks"].value<int>()) stage.launch.fixed_blocks = *blocks;

  if (const toml::table* tests = table["tests"].as_table()) {
    if (const toml::array* sizes = (*tests)["sizes"].as_array()) {
      for (const auto& size : *sizes) {
        auto n = size.value<std::int64_t>();
        if (!n) throw StageError(fmt::format("{}: tests.sizes must hold integers", file.string()));
        stage.test_sizes.push_back(*n);
      }
    }
    if (const toml::array* data = (*tests)["data"].as_array()) {
      for (const auto& name : *data) stage.data_sets.push_back(name.value_or(std::string{}));
    }
    stage.performance_size = (*tests)["performance_size"].value_or(std::int64_t{0});
    stage.runs = (*tests)["runs"].value_or(5);
  }

  if (const toml::table* gate = table["gate"].as_table()) {
    const std::string rule = (*gate)["rule"].value_or(std::string{"correctness"});
    if (rule == "time_ratio") {
      stage.gate.rule = GateRule::kTimeRatio;
    } else if (rule != "correctness") {
      throw StageError(
          fmt::format("{}: gate.rule '{}' is neither 'correctness' nor 'time_ratio'", file.string(), rule));
    }
    stage.gate.max_time_ratio = (*gate)["max_time_ratio"].value_or(2.0);
    if (auto ratio = (*gate)["min_sm_throughput_ratio"].value<double>())
      stage.gate.min_sm_throughput_ratio = *ratio;
  }

  validate(stage, file);
  stage.lesson_markdown = read_text_file(directory / "lesson.md");
  stage.starter_source = read_text_file(directory / "starter.cu");
  stage.reference_source = read_text_file(directory / "reference.cu");
  for (const Language language : all_languages()) {
    if (language == Language::kCuda) continue;
    const std::string extension(source_extension(language));
    if (fs::exists(directory / ("starter" + extension)))
      stage.other_starters[language] = read_text_file(directory / ("starter" + extension));
    if (fs::exists(directory / ("reference" + extension)))
      stage.other_references[language] = read_text_file(directory / ("reference" + extension));
  }
  return stage;
}

std::vector<Stage> load_course(const fs::path& course_root) {
  if (!fs::is_directory(course_root)) {
    throw StageError(
        fmt::format("course folder {} does not exist (set --course or CUDOJO_COURSE)", course_root.string()));
  }
  std::vector<fs::path> stage_dirs;
  for (const auto& track : fs::directory_iterator(course_root)) {
    if (!track.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(track.path())) {
      if (entry.is_directory() && fs::exists(entry.path() / "stage.toml")) {
        stage_dirs.push_back(entry.path());
      }
    }
  }
  std::sort(stage_dirs.begin(), stage_dirs.end());
  std::vector<Stage> course;
  for (const auto& dir : stage_dirs) course.push_back(load_stage(dir));
  for (std::size_t a = 0; a < course.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b) {
      if (course[a].id == course[b].id || course[a].slug_id() == course[b].slug_id()) {
        throw StageError(fmt::format("{} and {} share the id or slug '{}'", course[a].directory.string(),
                                     course[b].directory.string(), course[a].id));
      }
    }
  }
  return course;
}

const Stage* find_stage(const std::vector<Stage>& course, const std::string& id_or_alias) {
  for (const auto& stage : course) {
    if (stage.id == id_or_alias || stage.slug_id() == id_or_alias) return &stage;
  }
  return nullptr;
}

const std::string* Stage::starter(Language language) const {
  if (language == Language::kCuda) return &starter_source;
  auto found = other_starters.find(language);
  return found == other_starters.end() ? nullptr : &found->second;
}

const std::string* Stage::reference(Language language) const {
  if (language == Language::kCuda) return &reference_source;
  auto found = other_references.find(language);
  return found == other_references.end() ? nullptr : &found->second;
}

namespace {

std::string python_signature(const Stage& stage, const ContractInfo& contract) {
  std::vector<std::string> names, types;
  for (const auto& parameter : contract.kernel_parameters) {
    names.emplace_back(parameter.name);
    const std::string_view element = parameter.element == "f32" ? "float32" : "int32";
    types.push_back(parameter.is_array ? fmt::format("{} {}[::1]{}", parameter.name, element,
                                                     parameter.is_const ? " (read only)" : "")
                                       : fmt::format("{} {}", parameter.name, element));
  }
  return fmt::format("@cuda.jit def {}({}):  # {}", stage.kernel, fmt::join(names, ", "),
                     fmt::join(types, ", "));
}

std::string rust_signature(const Stage& stage, const ContractInfo& contract) {
  std::vector<std::string> parameters;
  for (const auto& parameter : contract.kernel_parameters) {
    std::string name(parameter.name);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    parameters.push_back(
        parameter.is_array
            ? fmt::format("{}: *{} {}", name, parameter.is_const ? "const" : "mut", parameter.element)
            : fmt::format("{}: {}", name, parameter.element));
  }
  return fmt::format("#[no_mangle] pub unsafe extern \"ptx-kernel\" fn {}({})", stage.kernel,
                     fmt::join(parameters, ", "));
}

}  // namespace

std::string describe_signature(const Stage& stage, Language language) {
  const ContractInfo* contract = find_contract_info(stage.contract);
  if (!contract) return "?";
  switch (language) {
    case Language::kPython:
      return python_signature(stage, *contract);
    case Language::kRust:
      return rust_signature(stage, *contract);
    case Language::kCuda:
      break;
  }
  return fmt::format("__global__ void {}({})", stage.kernel, contract->parameters);
}

std::string describe_launch(const Stage& stage) {
  const auto& l = stage.launch;
  const std::string grid = l.fixed_blocks ? fmt::format("{} blocks", *l.fixed_blocks)
                                          : fmt::format("ceil(N / {}) blocks", l.threads_per_block);
  return fmt::format("{} x {} threads, {} bytes of dynamic shared memory", grid, l.threads_per_block,
                     l.dynamic_shared_bytes);
}

std::string describe_gate(const Stage& stage) {
  if (stage.gate.rule == GateRule::kCorrectness) return "correctness: every test passes";
  std::string text =
      fmt::format("correct, and median time <= {:g} x the reference's, measured in the same run",
                  stage.gate.max_time_ratio);
  if (stage.gate.min_sm_throughput_ratio) {
    text += fmt::format("; when slower than the reference, SM throughput >= {:.3g} x the reference's",
                        *stage.gate.min_sm_throughput_ratio);
  }
  return text;
}

fs::path default_course_root() {
  if (const char* env = std::getenv(env::kCourse); env && *env) return env;
  if (fs::is_directory(CUDOJO_COURSE_DIR)) return CUDOJO_COURSE_DIR;
  // A build folder copied elsewhere (the GPU machine gets a copy of the tree): course/ sits beside
  // the folder that holds the executable.
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error && fs::is_directory(exe.parent_path().parent_path() / "course")) {
    return exe.parent_path().parent_path() / "course";
  }
  return CUDOJO_COURSE_DIR;
}

void to_json(nlohmann::json& j, const Stage& stage) {
  j = nlohmann::json{
      {"id", stage.id},
      {"slug", stage.slug},
      {"title", stage.title},
      {"summary", stage.summary},
      {"contract", stage.contract},
      {"kernel", stage.kernel},
      {"launch",
       {{"threads_per_block", stage.launch.threads_per_block},
        {"dynamic_shared_bytes", stage.launch.dynamic_shared_bytes},
        {"blocks",
         stage.launch.fixed_blocks ? nlohmann::json(*stage.launch.fixed_blocks) : nlohmann::json(nullptr)}}},
      {"tests",
       {{"sizes", stage.test_sizes},
        {"data", stage.data_sets},
        {"performance_size", stage.performance_size},
        {"runs", stage.runs}}},
      {"gate",
       {{"rule", to_string(stage.gate.rule)},
        {"max_time_ratio", stage.gate.max_time_ratio},
        {"min_sm_throughput_ratio", stage.gate.min_sm_throughput_ratio
                                        ? nlohmann::json(*stage.gate.min_sm_throughput_ratio)
                                        : nlohmann::json(nullptr)}}},
  };
}

void from_json(const nlohmann::json& j, Stage& stage) {
  j.at("id").get_to(stage.id);
  j.at("slug").get_to(stage.slug);
  j.at("title").get_to(stage.title);
  j.at("summary").get_to(stage.summary);
  j.at("contract").get_to(stage.contract);
  j.at("kernel").get_to(stage.kernel);
  const auto& launch = j.at("launch");
  launch.at("threads_per_block").get_to(stage.launch.threads_per_block);
  launch.at("dynamic_shared_bytes").get_to(stage.launch.dynamic_shared_bytes);
  if (!launch.at("blocks").is_null()) stage.launch.fixed_blocks = launch.at("blocks").get<int>();
  const auto& tests = j.at("tests");
  tests.at("sizes").get_to(stage.test_sizes);
  tests.at("data").get_to(stage.data_sets);
  tests.at("performance_size").get_to(stage.performance_size);
  tests.at("runs").get_to(stage.runs);
  const auto& gate = j.at("gate");
  stage.gate.rule =
      gate.at("rule").get<std::string>() == "time_ratio" ? GateRule::kTimeRatio : GateRule::kCorrectness;
  gate.at("max_time_ratio").get_to(stage.gate.max_time_ratio);
  if (gate.contains("min_sm_throughput_ratio") && !gate.at("min_sm_throughput_ratio").is_null()) {
    stage.gate.min_sm_throughput_ratio = gate.at("min_sm_throughput_ratio").get<double>();
  }
}

}  // namespace cudojo

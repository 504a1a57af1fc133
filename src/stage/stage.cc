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
  const ContractInfo& contract = *find_contract_info(stage.contract);
  if (stage.launch.fixed_blocks && stage.launch.blocks_per_sm) {
    fail("launch.blocks and launch.blocks_per_sm exclude each other");
  }
  if (stage.launch.blocks_per_sm && (*stage.launch.blocks_per_sm <= 0 || *stage.launch.blocks_per_sm > 32)) {
    fail("launch.blocks_per_sm must lie in 1 .. 32");
  }
  if (contract.has_second_kernel() != !stage.second_kernel.empty()) {
    fail(contract.has_second_kernel()
             ? fmt::format("the {} contract launches two kernels: name the second in 'second_kernel'",
                           contract.name)
             : fmt::format("the {} contract launches one kernel: remove 'second_kernel'", contract.name));
  }
  if (contract.has_second_kernel() && !stage.launch.blocks_per_sm) {
    fail("a two-kernel contract needs launch.blocks_per_sm: the second kernel folds one partial per block");
  }
  if (!stage.second_kernel.empty() && stage.second_kernel == stage.kernel) {
    fail("second_kernel must differ from kernel");
  }
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
    if (stage.data_sets.empty()) fail("tests.data must list at least one data set");
    for (const auto& data : stage.data_sets) {
      if (!contract_has_data(contract, data)) {
        fail(fmt::format("unknown data set '{}' for the {} contract ({})", data, contract.name,
                         fmt::join(contract.data_sets, ", ")));
      }
    }
    if (!contract.poison_data.empty() && std::find(stage.data_sets.begin(), stage.data_sets.end(),
                                                   contract.poison_data) == stage.data_sets.end()) {
      fail(fmt::format("tests.data must include '{}': poisoning and determinism are judged on it",
                       contract.poison_data));
    }
    if (!stage.timing_data.empty() && !contract_has_data(contract, stage.timing_data)) {
      fail(fmt::format("tests.timing_data '{}' is not a data set of the {} contract", stage.timing_data,
                       contract.name));
    }
    if (stage.max_relative_error && (*stage.max_relative_error <= 0 || *stage.max_relative_error >= 1)) {
      fail("tests.max_relative_error must lie strictly between 0 and 1");
    }
  }
  if (stage.runs < bounds.min_runs || stage.runs > bounds.max_runs) {
    fail(fmt::format("tests.runs must lie in {} .. {}", bounds.min_runs, bounds.max_runs));
  }
  if (stage.gate.rule != GateRule::kCorrectness && stage.gate.max_time_ratio <= 0) {
    fail("gate.max_time_ratio must be > 0");
  }
  if (stage.gate.rule == GateRule::kBaselineRatio) {
    if (stage.gate.baseline != "cub_reduce") fail("gate.baseline must be 'cub_reduce'");
    if (stage.contract != "one_accumulator" && stage.contract != "two_kernel_sum") {
      fail("gate.rule 'baseline_ratio' (CUB's float sum) needs a float-sum contract with one total");
    }
  }
}

}  // namespace

std::optional<GateRule> parse_gate_rule(std::string_view word) {
  if (word == "correctness") return GateRule::kCorrectness;
  if (word == "time_ratio") return GateRule::kTimeRatio;
  if (word == "baseline_ratio") return GateRule::kBaselineRatio;
  return std::nullopt;
}

std::string to_string(GateRule rule) {
  switch (rule) {
    case GateRule::kTimeRatio:
      return "time_ratio";
    case GateRule::kBaselineRatio:
      return "baseline_ratio";
    case GateRule::kCorrectness:
      break;
  }
  return "correctness";
}

std::string timing_data_set(const Stage& stage) {
  if (!stage.timing_data.empty()) return stage.timing_data;
  const ContractInfo* contract = find_contract_info(stage.contract);
  if (contract && !contract->poison_data.empty()) return std::string(contract->poison_data);
  return stage.data_sets.empty() ? std::string{} : stage.data_sets.front();
}

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
  stage.second_kernel = table["second_kernel"].value_or(std::string{});

  const toml::table* launch = table["launch"].as_table();
  if (!launch) throw StageError(fmt::format("{}: table [launch] is missing", file.string()));
  stage.launch.threads_per_block = required<int>(*launch, "threads_per_block", file);
  stage.launch.dynamic_shared_bytes = (*launch)["dynamic_shared_bytes"].value_or(0);
  if (auto blocks = (*launch)["blocks"].value<int>()) stage.launch.fixed_blocks = *blocks;
  if (auto per_sm = (*launch)["blocks_per_sm"].value<int>()) stage.launch.blocks_per_sm = *per_sm;

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
    stage.deterministic = (*tests)["deterministic"].value_or(false);
    if (auto bound = (*tests)["max_relative_error"].value<double>()) stage.max_relative_error = *bound;
    stage.timing_data = (*tests)["timing_data"].value_or(std::string{});
  }

  if (const toml::table* gate = table["gate"].as_table()) {
    const std::string rule = (*gate)["rule"].value_or(std::string{"correctness"});
    const auto parsed = parse_gate_rule(rule);
    if (!parsed) {
      throw StageError(fmt::format(
          "{}: gate.rule '{}' is not 'correctness', 'time_ratio' or 'baseline_ratio'", file.string(), rule));
    }
    stage.gate.rule = *parsed;
    stage.gate.max_time_ratio = (*gate)["max_time_ratio"].value_or(2.0);
    stage.gate.baseline = (*gate)["baseline"].value_or(std::string{});
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
  // The tracks' order is the course's (course.toml `tracks`); tracks it does not name follow, by
  // name. Within a track, stages go by folder name (01-..., 02-...).
  std::vector<std::string> track_order;
  if (fs::exists(course_root / "course.toml")) {
    try {
      const toml::table course = toml::parse_file((course_root / "course.toml").string());
      if (const toml::array* tracks = course["tracks"].as_array()) {
        for (const auto& track : *tracks) track_order.push_back(track.value_or(std::string{}));
      }
    } catch (const toml::parse_error& error) {
      throw StageError(fmt::format("{}:{}: {}", (course_root / "course.toml").string(),
                                   error.source().begin.line, error.description()));
    }
  }
  auto track_rank = [&](const fs::path& stage_dir) {
    const std::string track = stage_dir.parent_path().filename().string();
    const auto found = std::find(track_order.begin(), track_order.end(), track);
    return std::make_pair(static_cast<std::size_t>(found - track_order.begin()), stage_dir);
  };
  std::vector<fs::path> stage_dirs;
  for (const auto& track : fs::directory_iterator(course_root)) {
    if (!track.is_directory()) continue;
    for (const auto& entry : fs::directory_iterator(track.path())) {
      if (entry.is_directory() && fs::exists(entry.path() / "stage.toml")) {
        stage_dirs.push_back(entry.path());
      }
    }
  }
  std::sort(stage_dirs.begin(), stage_dirs.end(),
            [&](const fs::path& a, const fs::path& b) { return track_rank(a) < track_rank(b); });
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

std::string python_signature(const std::string& kernel, std::span<const KernelParameter> kernel_parameters) {
  std::vector<std::string> names, types;
  for (const auto& parameter : kernel_parameters) {
    names.emplace_back(parameter.name);
    const std::string_view element = parameter.element == "f32"   ? "float32"
                                     : parameter.element == "u32" ? "uint32"
                                     : parameter.element == "u64" ? "uint64"
                                                                  : "int32";
    types.push_back(parameter.is_array ? fmt::format("{} {}[::1]{}", parameter.name, element,
                                                     parameter.is_const ? " (read only)" : "")
                                       : fmt::format("{} {}", parameter.name, element));
  }
  return fmt::format("@cuda.jit def {}({}):  # {}", kernel, fmt::join(names, ", "), fmt::join(types, ", "));
}

std::string rust_signature(const std::string& kernel, std::span<const KernelParameter> kernel_parameters) {
  std::vector<std::string> parameters;
  for (const auto& parameter : kernel_parameters) {
    std::string name(parameter.name);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    parameters.push_back(
        parameter.is_array
            ? fmt::format("{}: *{} {}", name, parameter.is_const ? "const" : "mut", parameter.element)
            : fmt::format("{}: {}", name, parameter.element));
  }
  return fmt::format("#[no_mangle] pub unsafe extern \"ptx-kernel\" fn {}({})", kernel,
                     fmt::join(parameters, ", "));
}

}  // namespace

std::string describe_signature(const Stage& stage, Language language) {
  const ContractInfo* contract = find_contract_info(stage.contract);
  if (!contract) return "?";
  auto one = [&](const std::string& kernel, const KernelSignature& signature) {
    switch (language) {
      case Language::kPython:
        return python_signature(kernel, signature.kernel_parameters);
      case Language::kRust:
        return rust_signature(kernel, signature.kernel_parameters);
      case Language::kCuda:
        break;
    }
    return fmt::format("__global__ void {}({})", kernel, signature.parameters);
  };
  std::string text = one(stage.kernel, contract->first());
  if (contract->has_second_kernel()) text += "; then " + one(stage.second_kernel, contract->second);
  return text;
}

std::string describe_launch(const Stage& stage) {
  const auto& l = stage.launch;
  const std::string grid =
      l.fixed_blocks    ? fmt::format("{} blocks", *l.fixed_blocks)
      : l.blocks_per_sm ? fmt::format("{} blocks per SM (a fixed grid, whatever N is)", *l.blocks_per_sm)
                        : fmt::format("ceil(N / {}) blocks", l.threads_per_block);
  std::string text = fmt::format("{} x {} threads, {} bytes of dynamic shared memory", grid,
                                 l.threads_per_block, l.dynamic_shared_bytes);
  if (!stage.second_kernel.empty()) {
    text += fmt::format("; then {} on 1 block x {} threads with count = the first grid's blocks",
                        stage.second_kernel, l.threads_per_block);
  }
  return text;
}

std::string describe_tests(const Stage& stage) {
  if (stage.test_sizes.empty()) return fmt::format("Repeats: {}.", stage.runs);
  std::string text = fmt::format("Sizes: {}. Data: {}. Timed at n = {} on {} data. Repeats: {}.",
                                 fmt::join(stage.test_sizes, ", "), fmt::join(stage.data_sets, ", "),
                                 stage.performance_size, timing_data_set(stage), stage.runs);
  if (stage.deterministic) text += " Every run must give the same bits, on inexact data too.";
  if (stage.max_relative_error) {
    text +=
        fmt::format(" On inexact data, |error| / |sum| must stay within {:g}.", *stage.max_relative_error);
  }
  return text;
}

std::string describe_gate(const Stage& stage) {
  if (stage.gate.rule == GateRule::kCorrectness) return "correctness: every test passes";
  if (stage.gate.rule == GateRule::kBaselineRatio) {
    return fmt::format(
        "correct, and median time <= {:g} x CUB's DeviceReduce::Sum on the same data, timed in "
        "the same run",
        stage.gate.max_time_ratio);
  }
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
      {"second_kernel", stage.second_kernel},
      {"launch",
       {{"threads_per_block", stage.launch.threads_per_block},
        {"dynamic_shared_bytes", stage.launch.dynamic_shared_bytes},
        {"blocks",
         stage.launch.fixed_blocks ? nlohmann::json(*stage.launch.fixed_blocks) : nlohmann::json(nullptr)},
        {"blocks_per_sm", stage.launch.blocks_per_sm ? nlohmann::json(*stage.launch.blocks_per_sm)
                                                     : nlohmann::json(nullptr)}}},
      {"tests",
       {{"sizes", stage.test_sizes},
        {"data", stage.data_sets},
        {"performance_size", stage.performance_size},
        {"runs", stage.runs},
        {"deterministic", stage.deterministic},
        {"max_relative_error",
         stage.max_relative_error ? nlohmann::json(*stage.max_relative_error) : nlohmann::json(nullptr)},
        {"timing_data", stage.timing_data}}},
      {"gate",
       {{"rule", to_string(stage.gate.rule)},
        {"max_time_ratio", stage.gate.max_time_ratio},
        {"baseline", stage.gate.baseline},
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
  stage.second_kernel = j.value("second_kernel", std::string{});
  const auto& launch = j.at("launch");
  launch.at("threads_per_block").get_to(stage.launch.threads_per_block);
  launch.at("dynamic_shared_bytes").get_to(stage.launch.dynamic_shared_bytes);
  if (!launch.at("blocks").is_null()) stage.launch.fixed_blocks = launch.at("blocks").get<int>();
  if (launch.contains("blocks_per_sm") && !launch.at("blocks_per_sm").is_null()) {
    stage.launch.blocks_per_sm = launch.at("blocks_per_sm").get<int>();
  }
  const auto& tests = j.at("tests");
  tests.at("sizes").get_to(stage.test_sizes);
  tests.at("data").get_to(stage.data_sets);
  tests.at("performance_size").get_to(stage.performance_size);
  tests.at("runs").get_to(stage.runs);
  stage.deterministic = tests.value("deterministic", false);
  if (tests.contains("max_relative_error") && !tests.at("max_relative_error").is_null()) {
    stage.max_relative_error = tests.at("max_relative_error").get<double>();
  }
  stage.timing_data = tests.value("timing_data", std::string{});
  const auto& gate = j.at("gate");
  stage.gate.rule = parse_gate_rule(gate.at("rule").get<std::string>()).value_or(GateRule::kCorrectness);
  gate.at("max_time_ratio").get_to(stage.gate.max_time_ratio);
  stage.gate.baseline = gate.value("baseline", std::string{});
  if (gate.contains("min_sm_throughput_ratio") && !gate.at("min_sm_throughput_ratio").is_null()) {
    stage.gate.min_sm_throughput_ratio = gate.at("min_sm_throughput_ratio").get<double>();
  }
}

}  // namespace cudojo

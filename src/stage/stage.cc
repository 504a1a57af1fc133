// What a loaded stage says in words (describe_*: the CLI's and the server's one-line texts), its
// lookup by id or alias, the problems and broken stages of a course, and the stage as JSON for the
// worker. Reading the files is stage_parse.cc and stage_folder.cc.
#include "stage/stage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/environment.h"
#include "stage/contract_info.h"

namespace cudojo {

namespace fs = std::filesystem;

std::string StageProblem::text() const {
  if (line > 0) return fmt::format("{}:{}: {}", file.string(), line, message);
  return fmt::format("{}: {}", file.string(), message);
}

namespace {

std::string joined(const std::vector<StageProblem>& problems) {
  std::string text;
  for (const auto& problem : problems) text += (text.empty() ? "" : "\n") + problem.text();
  return text;
}

}  // namespace

StageError::StageError(const std::string& message) : std::runtime_error(message) {}

StageError::StageError(std::vector<StageProblem> problems)
    : std::runtime_error(joined(problems)), problems_(std::move(problems)) {}

std::string BrokenStage::label() const {
  if (!id.empty()) return id;
  const std::string folder = directory.filename().string();
  const std::string track = directory.parent_path().filename().string();
  std::size_t digits = 0;
  while (digits < folder.size() && std::isdigit(static_cast<unsigned char>(folder[digits]))) ++digits;
  if (digits == 0) return track + "/" + folder;
  return track + "/" + std::to_string(std::stol(folder.substr(0, digits)));
}

std::string BrokenStage::reason() const { return joined(problems); }

const BrokenStage* Course::find_broken(const std::string& id_or_alias) const {
  for (const auto& stage : broken) {
    const std::string track = stage.directory.parent_path().filename().string();
    if (stage.label() == id_or_alias || (!stage.slug.empty() && track + "/" + stage.slug == id_or_alias) ||
        track + "/" + stage.directory.filename().string() == id_or_alias) {
      return &stage;
    }
  }
  return nullptr;
}

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
  // As the starters write it: #[kernel] stands for #[no_mangle] pub unsafe extern "ptx-kernel"
  // (course/languages/rust.md), and the body may use raw pointers without an unsafe block.
  return fmt::format("#[kernel] fn {}({})", kernel, fmt::join(parameters, ", "));
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

std::string format_ratio(double ratio) {
  std::string text = fmt::format("{:.2f}", ratio);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  if (text == "0" && ratio != 0) text = fmt::format("{:.2g}", ratio);  // 0.004 is not 0
  return text + "x";
}

std::string describe_gate(const Stage& stage) {
  if (stage.gate.rule == GateRule::kCorrectness) return "correctness: every test passes";
  if (stage.gate.rule == GateRule::kBaselineRatio) {
    return fmt::format(
        "correct, and median time <= {} CUB's DeviceReduce::Sum on the same data, timed in the same run",
        format_ratio(stage.gate.max_time_ratio));
  }
  std::string text = fmt::format("correct, and median time <= {} the reference's, measured in the same run",
                                 format_ratio(stage.gate.max_time_ratio));
  if (stage.gate.min_sm_throughput_ratio) {
    text += fmt::format("; when slower than the reference, SM throughput >= {} the reference's",
                        format_ratio(*stage.gate.min_sm_throughput_ratio));
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

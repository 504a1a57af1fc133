// One stage folder: its stage.toml read strictly and checked against the contract and the limits
// table, its files (lesson, starter and reference per language, in pairs), and the kernel names its
// sources define. Every problem is gathered with its file and line; none stops the others.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <tuple>

#include "common/limits.h"
#include "stage/contract_info.h"
#include "stage/kernel_scan.h"
#include "stage/stage_parse_internal.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

bool is_identifier(const std::string& name) {
  return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

bool is_slug(const std::string& slug) {
  return !slug.empty() && std::all_of(slug.begin(), slug.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-';
  });
}

// Values are taken only when their type was right; check_table reported the others.
void read_fields(const toml::table& table, Stage& stage) {
  stage.id = table["id"].value_or(std::string{});
  stage.slug = table["slug"].value_or(std::string{});
  stage.title = table["title"].value_or(std::string{});
  stage.summary = table["summary"].value_or(std::string{});
  stage.contract = table["contract"].value_or(std::string{});
  stage.kernel = table["kernel"].value_or(std::string{});
  stage.second_kernel = table["second_kernel"].value_or(std::string{});
  auto integer = [](toml::node_view<const toml::node> node) -> std::optional<int> {
    const auto value = node.value<std::int64_t>();
    if (!value || !node.is_integer()) return std::nullopt;
    return static_cast<int>(
        std::clamp<std::int64_t>(*value, -1, 1 << 30));  // out of range stays out of range
  };
  const auto launch = table["launch"];
  stage.launch.threads_per_block = integer(launch["threads_per_block"]).value_or(0);
  stage.launch.dynamic_shared_bytes = integer(launch["dynamic_shared_bytes"]).value_or(0);
  stage.launch.fixed_blocks = integer(launch["blocks"]);
  stage.launch.blocks_per_sm = integer(launch["blocks_per_sm"]);
  const auto tests = table["tests"];
  if (const toml::array* sizes = tests["sizes"].as_array()) {
    for (const auto& size : *sizes) {
      if (auto n = size.value<std::int64_t>()) stage.test_sizes.push_back(*n);
    }
  }
  if (const toml::array* data = tests["data"].as_array()) {
    for (const auto& name : *data) {
      if (auto text = name.value<std::string>()) stage.data_sets.push_back(*text);
    }
  }
  stage.performance_size =
      tests["performance_size"].is_integer() ? *tests["performance_size"].value<std::int64_t>() : 0;
  stage.runs = integer(tests["runs"]).value_or(5);
  stage.deterministic = tests["deterministic"].value_or(false);
  if (auto bound = tests["max_relative_error"].value<double>()) stage.max_relative_error = *bound;
  stage.timing_data = tests["timing_data"].value_or(std::string{});
  const auto gate = table["gate"];
  stage.gate.rule =
      parse_gate_rule(gate["rule"].value_or(std::string{"correctness"})).value_or(GateRule::kCorrectness);
  stage.gate.max_time_ratio = gate["max_time_ratio"].value_or(2.0);
  stage.gate.baseline = gate["baseline"].value_or(std::string{});
  if (auto ratio = gate["min_sm_throughput_ratio"].value<double>())
    stage.gate.min_sm_throughput_ratio = *ratio;
  stage.expected_starter_verdict = table["expect"]["starter"].value_or(std::string{});
}

// The stage's rules beyond types: the id against its folder, the contract's needs, the limits table.
void validate(const toml::table& table, const Stage& stage, const fs::path& directory, FileReport& report) {
  auto fail = [&](const std::string& key, std::string message) { report.add_at(key, std::move(message)); };
  const std::string track = directory.parent_path().filename().string();
  const std::string folder = directory.filename().string();
  const std::size_t slash = stage.id.find('/');
  const std::string number = slash == std::string::npos ? "" : stage.id.substr(slash + 1);
  if (table["id"].is_string()) {
    if (slash == std::string::npos || number.empty() ||
        !std::all_of(number.begin(), number.end(), [](unsigned char c) { return std::isdigit(c); })) {
      fail("id", fmt::format("id must look like '<track>/<number>' ('{}/1'), not '{}'", track, stage.id));
    } else if (stage.id.substr(0, slash) != track) {
      fail("id", fmt::format("id '{}' names track '{}', but the stage's folder is in '{}'", stage.id,
                             stage.id.substr(0, slash), track));
    } else if (std::isdigit(static_cast<unsigned char>(folder[0])) &&
               std::stol(folder.substr(0, folder.find('-'))) != std::stol(number)) {
      fail("id", fmt::format("id '{}' says stage {}, but its folder {} says {}", stage.id, number, folder,
                             std::stol(folder.substr(0, folder.find('-')))));
    }
  }
  if (table["slug"].is_string() && !is_slug(stage.slug)) {
    fail("slug",
         fmt::format("slug '{}' may hold only lowercase letters, digits and '-' (it is part of a URL)",
                     stage.slug));
  }
  for (const auto* key : {"kernel", "second_kernel"}) {
    const std::string& name = std::string_view(key) == "kernel" ? stage.kernel : stage.second_kernel;
    if (table[key].is_string() && !is_identifier(name)) {
      fail(key, fmt::format("{} '{}' is not a function name (letters, digits and '_')", key, name));
    }
  }
  if (!table["contract"].is_string()) return;
  const ContractInfo* found = find_contract_info(stage.contract);
  if (!found) {
    std::vector<std::string> names;
    for (const auto& contract : all_contracts()) names.emplace_back(contract.name);
    const auto hint = closest_name(stage.contract, names);
    fail("contract",
         fmt::format("contract '{}' is not one the judge implements{} (the contracts: {})", stage.contract,
                     hint ? fmt::format("; did you mean '{}'?", *hint) : "", fmt::join(names, ", ")));
    return;
  }
  const ContractInfo& contract = *found;
  const StageBounds& bounds = kStageBounds;
  const LaunchShape& launch = stage.launch;
  if (launch.threads_per_block <= 0 || launch.threads_per_block > bounds.max_threads_per_block ||
      launch.threads_per_block % bounds.warp_size != 0) {
    fail("launch.threads_per_block",
         fmt::format("launch.threads_per_block must be a multiple of {} between {} and {}", bounds.warp_size,
                     bounds.warp_size, bounds.max_threads_per_block));
  }
  if (launch.dynamic_shared_bytes < 0)
    fail("launch.dynamic_shared_bytes", "launch.dynamic_shared_bytes must be >= 0");
  if (launch.fixed_blocks && launch.blocks_per_sm) {
    fail("launch.blocks_per_sm", "launch.blocks and launch.blocks_per_sm exclude each other");
  }
  if (launch.blocks_per_sm && (*launch.blocks_per_sm <= 0 || *launch.blocks_per_sm > 32)) {
    fail("launch.blocks_per_sm", "launch.blocks_per_sm must lie in 1 .. 32");
  }
  if (table["second_kernel"].is_string() || contract.has_second_kernel()) {
    if (contract.has_second_kernel() != !stage.second_kernel.empty()) {
      fail(contract.has_second_kernel() ? "contract" : "second_kernel",
           contract.has_second_kernel()
               ? fmt::format("the {} contract launches two kernels: name the second in 'second_kernel'",
                             contract.name)
               : fmt::format("the {} contract launches one kernel: remove 'second_kernel'", contract.name));
    }
  }
  if (contract.has_second_kernel() && !launch.blocks_per_sm) {
    fail("launch",
         "a two-kernel contract needs launch.blocks_per_sm: the second kernel folds one partial per block");
  }
  if (!stage.second_kernel.empty() && stage.second_kernel == stage.kernel) {
    fail("second_kernel", "second_kernel must differ from kernel");
  }
  if (stage.contract == "counter") {
    if (!launch.fixed_blocks || *launch.fixed_blocks <= 0)
      fail("launch.blocks", "the counter contract needs launch.blocks > 0");
    for (const auto* key : {"sizes", "data", "performance_size", "timing_data", "max_relative_error"}) {
      if (table["tests"][key]) {
        fail(fmt::format("tests.{}", key),
             fmt::format("the counter contract has no sizes or data: remove tests.{} (it would be ignored)",
                         key));
      }
    }
  } else {
    if (launch.fixed_blocks && *launch.fixed_blocks <= 0) fail("launch.blocks", "launch.blocks must be > 0");
    if (stage.test_sizes.empty()) fail("tests.sizes", "tests.sizes must list at least one size");
    for (auto n : stage.test_sizes) {
      if (n <= 0 || n > bounds.max_size) {
        fail("tests.sizes", fmt::format("tests.sizes must lie in 1 .. {}; {} does not", bounds.max_size, n));
        break;
      }
    }
    if (stage.performance_size <= 0 || stage.performance_size > bounds.max_size) {
      fail("tests.performance_size",
           fmt::format("tests.performance_size must lie in 1 .. {}", bounds.max_size));
    }
    if (stage.data_sets.empty()) fail("tests.data", "tests.data must list at least one data set");
    for (const auto& data : stage.data_sets) {
      if (!contract_has_data(contract, data)) {
        fail("tests.data", fmt::format("unknown data set '{}' for the {} contract ({})", data, contract.name,
                                       fmt::join(contract.data_sets, ", ")));
      }
    }
    if (!contract.poison_data.empty() && !stage.data_sets.empty() &&
        std::find(stage.data_sets.begin(), stage.data_sets.end(), contract.poison_data) ==
            stage.data_sets.end()) {
      fail("tests.data",
           fmt::format("tests.data must include '{}': poisoning and determinism are judged on it",
                       contract.poison_data));
    }
    if (!stage.timing_data.empty() && !contract_has_data(contract, stage.timing_data)) {
      fail("tests.timing_data",
           fmt::format("tests.timing_data '{}' is not a data set of the {} contract ({})", stage.timing_data,
                       contract.name, fmt::join(contract.data_sets, ", ")));
    }
    if (stage.max_relative_error && (*stage.max_relative_error <= 0 || *stage.max_relative_error >= 1)) {
      fail("tests.max_relative_error", "tests.max_relative_error must lie strictly between 0 and 1");
    }
  }
  if (stage.runs < bounds.min_runs || stage.runs > bounds.max_runs) {
    fail("tests.runs", fmt::format("tests.runs must lie in {} .. {}", bounds.min_runs, bounds.max_runs));
  }
  const auto gate = table["gate"];
  if (auto rule = gate["rule"].value<std::string>(); rule && !parse_gate_rule(*rule)) {
    fail("gate.rule",
         fmt::format("gate.rule '{}' is not 'correctness', 'time_ratio' or 'baseline_ratio'", *rule));
  }
  const GateRule rule = stage.gate.rule;
  if (rule != GateRule::kCorrectness && stage.gate.max_time_ratio <= 0)
    fail("gate.max_time_ratio", "gate.max_time_ratio must be > 0");
  if (rule == GateRule::kCorrectness && gate["max_time_ratio"]) {
    fail("gate.max_time_ratio",
         "gate.max_time_ratio has no effect with rule = \"correctness\": remove it, or "
         "set rule = \"time_ratio\"");
  }
  if (rule != GateRule::kTimeRatio && gate["min_sm_throughput_ratio"]) {
    fail("gate.min_sm_throughput_ratio",
         "gate.min_sm_throughput_ratio applies only to rule = \"time_ratio\"");
  }
  if (stage.gate.min_sm_throughput_ratio && *stage.gate.min_sm_throughput_ratio <= 0) {
    fail("gate.min_sm_throughput_ratio", "gate.min_sm_throughput_ratio must be > 0");
  }
  if (rule == GateRule::kBaselineRatio) {
    if (stage.gate.baseline != "cub_reduce") fail("gate.baseline", "gate.baseline must be 'cub_reduce'");
    if (stage.contract != "one_accumulator" && stage.contract != "two_kernel_sum") {
      fail("gate.rule",
           "gate.rule 'baseline_ratio' (CUB's float sum) needs a float-sum contract with one total");
    }
  } else if (gate["baseline"]) {
    fail("gate.baseline", "gate.baseline applies only to rule = \"baseline_ratio\"");
  }
  const std::string& expected = stage.expected_starter_verdict;
  const auto verdicts = expectable_verdicts();
  if (!expected.empty() && std::find(verdicts.begin(), verdicts.end(), expected) == verdicts.end()) {
    std::vector<std::string> words(verdicts.begin(), verdicts.end());
    const auto hint = closest_name(expected, words);
    fail("expect.starter",
         fmt::format("expect.starter '{}' is not a verdict{} ({})", expected,
                     hint ? fmt::format("; did you mean '{}'?", *hint) : "", fmt::join(words, ", ")));
  }
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lesson, starter.cu and reference.cu must be there; a Python or Rust starter and its reference
// come together or not at all.
void read_sources(const fs::path& directory, Stage& stage, std::vector<StageProblem>& problems) {
  auto missing = [&](const std::string& name, std::string why) {
    problems.push_back({directory / name, 0, "", fmt::format("{} is missing: {}", name, why)});
  };
  auto required = [&](const std::string& name, std::string& into, const char* why) {
    if (auto text = read_file(directory / name)) {
      into = std::move(*text);
    } else {
      missing(name, why);
    }
  };
  required("lesson.md", stage.lesson_markdown, "every stage has a lesson (markdown)");
  required("starter.cu", stage.starter_source,
           "every stage has a CUDA C++ starter, the file a learner begins from");
  required("reference.cu", stage.reference_source,
           "every stage has a CUDA C++ reference, the kernel every language is timed against");
  for (const Language language : all_languages()) {
    if (language == Language::kCuda) continue;
    const std::string extension(source_extension(language));
    auto starter = read_file(directory / ("starter" + extension));
    auto reference = read_file(directory / ("reference" + extension));
    if (starter && !reference) {
      missing(
          "reference" + extension,
          fmt::format("starter{} is there, and every {} starter needs its reference (`course check --gpu` "
                      "proves the language can pass the stage with it); add one, or remove starter{}",
                      extension, display_name(language), extension));
    } else if (reference && !starter) {
      missing("starter" + extension,
              fmt::format("reference{} is there, but learners choosing {} would get no "
                          "starter; add one, or remove reference{}",
                          extension, display_name(language), extension));
    } else if (starter && reference) {
      stage.other_starters[language] = std::move(*starter);
      stage.other_references[language] = std::move(*reference);
    }
  }
}

// Each source defines the kernels stage.toml names, as kernels of its language.
void check_kernel_names(const Stage& stage, FileReport& report, std::vector<StageProblem>& problems) {
  std::vector<std::pair<std::string, std::string>> names = {{"kernel", stage.kernel}};
  if (!stage.second_kernel.empty()) names.emplace_back("second_kernel", stage.second_kernel);
  for (const Language language : all_languages()) {
    for (const bool reference : {false, true}) {
      const std::string* source = reference ? stage.reference(language) : stage.starter(language);
      if (!source || source->empty()) continue;
      const fs::path file = stage.directory / fmt::format("{}{}", reference ? "reference" : "starter",
                                                          source_extension(language));
      const auto kernels = find_kernel_definitions(language, *source);
      std::vector<std::string> defined;
      for (const auto& kernel : kernels) defined.push_back(kernel.name);
      for (const auto& [key, name] : names) {
        if (!is_identifier(name) || std::find(defined.begin(), defined.end(), name) != defined.end())
          continue;
        const auto it = report.lines.find(key);
        const std::string where = fmt::format("{}:{}: {} = \"{}\"", report.file().filename().string(),
                                              it == report.lines.end() ? 0 : it->second, key, name);
        if (const auto line = find_function_line(language, *source, name)) {
          problems.push_back({file, *line, key,
                              fmt::format("'{}' is defined here but not as a kernel: make it {} ({})", name,
                                          kernel_declaration(language), where)});
        } else if (!kernels.empty()) {
          const auto hint = closest_name(name, defined);
          problems.push_back(
              {file, kernels.front().line, key,
               fmt::format("defines no kernel '{}' ({}); the kernels here: {}{}", name, where,
                           fmt::join(defined, ", "),
                           hint ? fmt::format(" (rename '{}', or change {})", *hint, key) : "")});
        } else {
          problems.push_back({file, 0, key,
                              fmt::format("defines no kernel: the stage launches '{}', {} ({})", name,
                                          kernel_declaration(language), where)});
        }
      }
    }
  }
}

}  // namespace

StageLoad load_stage_folder(const fs::path& directory) {
  StageLoad loaded;
  const fs::path file = directory / "stage.toml";
  FileReport report(file, loaded.problems);
  Stage stage;
  stage.directory = directory;
  if (!fs::exists(file)) {
    report.add(0, "",
               "stage.toml is missing: every stage folder has one (docs/stages.md; `cudojo stage new` "
               "writes a stage to start from)");
  } else if (auto table = parse_toml(file, report)) {
    check_table(*table, "", stage_file_keys(), report);
    read_fields(*table, stage);
    loaded.id = stage.id;
    loaded.slug = stage.slug;
    loaded.id_line = report.lines.contains("id") ? report.lines["id"] : 0;
    loaded.slug_line = report.lines.contains("slug") ? report.lines["slug"] : 0;
    validate(*table, stage, directory, report);
  }
  read_sources(directory, stage, loaded.problems);
  if (!stage.kernel.empty()) check_kernel_names(stage, report, loaded.problems);
  // In reading order: the stage file's by line (TOML tables come back by key), then the others.
  std::stable_sort(loaded.problems.begin(), loaded.problems.end(),
                   [&](const StageProblem& a, const StageProblem& b) {
                     return std::make_tuple(a.file != file, a.file, a.line) <
                            std::make_tuple(b.file != file, b.file, b.line);
                   });
  if (loaded.problems.empty()) loaded.stage = std::move(stage);
  return loaded;
}

}  // namespace cudojo

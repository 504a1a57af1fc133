#include "stage/scaffold.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "stage/contract_info.h"
#include "stage/language.h"
#include "stage/scaffold_templates.h"
#include "stage/stage.h"

namespace cudojo {

namespace {

// What stage.toml gets for each contract: its kernels, and launch, tests and gate tables sized as
// the course's own stages on that contract are (docs/stages.md says what each key does).
struct StageDefaults {
  std::string_view contract, kernel, second_kernel, launch, tests, gate;
};

constexpr std::string_view kSumTests =
    "# 1, 255 and 257 leave a partial last block; 1000003 is not a multiple of anything useful.\n"
    "sizes = [1, 255, 256, 257, 65536, 1000003, 4194304]\n"
    "data = [\"exact\", \"fractional\", \"random_signed\"]\n"
    "performance_size = 4194304\n"
    "runs = 5\n";
constexpr std::string_view kTimeGate =
    "# TODO(author): the gate your lesson teaches toward (docs/stages.md: correctness, time_ratio,\n"
    "# baseline_ratio). time_ratio: the learner's median time within this many times the reference's.\n"
    "rule = \"time_ratio\"\n"
    "max_time_ratio = 2.0\n";

constexpr StageDefaults kDefaults[] = {
    {"counter", "count", "", "blocks = 4096\nthreads_per_block = 256\ndynamic_shared_bytes = 0\n",
     "# A race loses a different number of updates each time, so the count is checked on several launches.\n"
     "runs = 5\n",
     "rule = \"correctness\"\n"},
    {"one_accumulator", "reduce", "", "threads_per_block = 256\ndynamic_shared_bytes = 0\n", kSumTests,
     kTimeGate},
    {"partial_per_block", "block_sum", "", "threads_per_block = 256\ndynamic_shared_bytes = 0\n", kSumTests,
     kTimeGate},
    {"two_kernel_sum", "block_partials", "fold_partials",
     "threads_per_block = 256\ndynamic_shared_bytes = 0\n"
     "blocks_per_sm = 4  # a fixed grid sized to the GPU; the second kernel runs on one block\n",
     "sizes = [1, 3, 255, 257, 65537, 1000003, 4194305]\n"
     "data = [\"exact\", \"fractional\", \"random_signed\"]\n"
     "performance_size = 4194304\n"
     "runs = 20\n"
     "deterministic = true  # every run must give the same bits, on inexact data too\n",
     kTimeGate},
    {"u64_sum", "sum_u32", "", "threads_per_block = 256\ndynamic_shared_bytes = 0\n",
     "# 2^25 bytes (mean 127.5) add up past 2^32.\n"
     "sizes = [1, 255, 256, 257, 65536, 1000003, 33554432]\n"
     "data = [\"bytes\", \"full_range\"]\n"
     "performance_size = 16777216\n"
     "runs = 5\n",
     kTimeGate},
    {"histogram", "histogram", "", "threads_per_block = 256\ndynamic_shared_bytes = 0\n",
     "sizes = [1, 255, 256, 257, 65536, 1000003, 16777216]\n"
     "data = [\"spread\", \"one_bin\"]\n"
     "performance_size = 16777216\n"
     "runs = 5\n"
     "timing_data = \"spread\"\n",
     kTimeGate},
    {"float_max", "max_value", "", "threads_per_block = 256\ndynamic_shared_bytes = 0\n",
     "sizes = [1, 2, 255, 256, 257, 65536, 1000003, 4194304]\n"
     "data = [\"random_signed\", \"all_negative\", \"signed_zeros\", \"with_nan\"]\n"
     "performance_size = 4194304\n"
     "runs = 5\n",
     "rule = \"correctness\"\n"},
};

const StageDefaults& defaults_for(const std::string& contract) {
  for (const auto& entry : kDefaults) {
    if (entry.contract == contract) return entry;
  }
  std::vector<std::string_view> names;
  for (const auto& known : all_contracts()) names.push_back(known.name);
  throw std::invalid_argument(
      fmt::format("no contract '{}'; the contracts are {}", contract, fmt::join(names, ", ")));
}

std::string default_slug(const ScaffoldRequest& request) {
  if (!request.slug.empty()) return request.slug;
  std::string slug = request.contract;
  std::replace(slug.begin(), slug.end(), '_', '-');
  return slug;
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

std::string stage_file(const ScaffoldRequest& request, const StageDefaults& defaults) {
  const std::string id = fmt::format("{}/{}", request.track, request.number);
  std::string text = fmt::format(
      "# Stage {}, on the {} contract; docs/stages.md describes every key. `cudojo course check {}`\n"
      "# checks the stage without a GPU; with --gpu it judges its references and starters on one.\n"
      "id = \"{}\"\nslug = \"{}\"\ntitle = {}\n"
      "summary = \"TODO(author): one sentence: what the learner's kernel does, and what it teaches.\"\n"
      "contract = \"{}\"\nkernel = \"{}\"\n",
      id, request.contract, id, id, default_slug(request),
      request.title.empty() ? std::string("\"TODO(author): the stage's title\"") : quoted(request.title),
      request.contract, defaults.kernel);
  if (!defaults.second_kernel.empty())
    text += fmt::format("second_kernel = \"{}\"\n", defaults.second_kernel);
  text +=
      fmt::format("\n[launch]\n{}\n[tests]\n{}\n[gate]\n{}", defaults.launch, defaults.tests, defaults.gate);
  text +=
      "\n[expect]\n"
      "# TODO(author): the verdict your starter gets in every language; the scaffold's starters compute\n"
      "# nothing, so they get wrong_answer.\n"
      "starter = \"wrong_answer\"\n";
  return text;
}

std::string lesson(const ScaffoldRequest& request) {
  const std::string id = fmt::format("{}/{}", request.track, request.number);
  return fmt::format(
      "# {}\n\n"
      "TODO(author): the lesson. What the learner knows from the stage before, what goes wrong with\n"
      "the starter, and the idea that fixes it. `cudojo show {}` prints the kernel's signature, the\n"
      "launch, what the driver checks and the gate after this text: the lesson need not repeat them.\n\n"
      "## What you will learn\n\n"
      "- TODO(author): one line per skill, in the terms the gate measures.\n",
      request.title.empty() ? "TODO(author): the stage's title" : request.title, id);
}

// The starters: the contract's signature in each language and a body that compiles and does nothing.
std::string cuda_starter(const ContractInfo& contract, const StageDefaults& defaults, const std::string& id) {
  std::string text = fmt::format(
      "// Stage {}. TODO(author): what the kernel computes, and the launch\n// (`cudojo show {}` prints "
      "it).\n",
      id, id);
  auto kernel = [&](std::string_view name, std::string_view parameters) {
    return fmt::format(
        "__global__ void {}({}) {{\n    // TODO(author): the kernel the learner starts from.\n}}\n", name,
        parameters);
  };
  text += kernel(defaults.kernel, contract.parameters);
  if (contract.has_second_kernel()) text += "\n" + kernel(defaults.second_kernel, contract.second.parameters);
  return text;
}

std::string python_starter(const ContractInfo& contract, const StageDefaults& defaults,
                           const std::string& id) {
  std::string text = fmt::format(
      "# Stage {}. TODO(author): what the kernel computes, and the launch\n"
      "# (`cudojo show {} --lang python` prints it).\n"
      "from numba import cuda\n",
      id, id);
  auto kernel = [&](std::string_view name, std::span<const KernelParameter> parameters) {
    std::vector<std::string_view> names;
    for (const auto& parameter : parameters) names.push_back(parameter.name);
    return fmt::format(
        "\n\n@cuda.jit\ndef {}({}):\n    # TODO(author): the kernel the learner starts from.\n    pass\n",
        name, fmt::join(names, ", "));
  };
  text += kernel(defaults.kernel, contract.kernel_parameters);
  if (contract.has_second_kernel()) text += kernel(defaults.second_kernel, contract.second.kernel_parameters);
  return text;
}

std::string rust_starter(const ContractInfo& contract, const StageDefaults& defaults, const std::string& id) {
  std::string text = fmt::format(
      "// Stage {}. TODO(author): what the kernel computes, and the launch\n"
      "// (`cudojo show {} --lang rust` prints it).\n",
      id, id);
  auto kernel = [&](std::string_view name, std::span<const KernelParameter> parameters) {
    std::vector<std::string> typed, names;
    for (const auto& parameter : parameters) {
      std::string lower(parameter.name);
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      typed.push_back(
          parameter.is_array
              ? fmt::format("{}: *{} {}", lower, parameter.is_const ? "const" : "mut", parameter.element)
              : fmt::format("{}: {}", lower, parameter.element));
      names.push_back(lower);
    }
    // `let _ = (a, b);` keeps rustc from warning about parameters the empty body does not use.
    const std::string unused =
        names.size() == 1 ? names.front() : fmt::format("({})", fmt::join(names, ", "));
    return fmt::format(
        "#[kernel]\nfn {}({}) {{\n    // TODO(author): the kernel the learner starts from.\n    let _ = "
        "{};\n}}\n",
        name, fmt::join(typed, ", "), unused);
  };
  text += kernel(defaults.kernel, contract.kernel_parameters);
  if (contract.has_second_kernel()) {
    text += "\n" + kernel(defaults.second_kernel, contract.second.kernel_parameters);
  }
  return text;
}

std::string with_id(std::string_view text, const std::string& id) {
  std::string result(text);
  for (std::size_t at = result.find("@ID@"); at != std::string::npos; at = result.find("@ID@", at)) {
    result.replace(at, 4, id);
  }
  return result;
}

}  // namespace

std::string scaffold_folder_name(const ScaffoldRequest& request) {
  return fmt::format("{:02}-{}", request.number, default_slug(request));
}

std::vector<ScaffoldFile> scaffold_stage(const ScaffoldRequest& request) {
  const StageDefaults& defaults = defaults_for(request.contract);
  const ContractInfo& contract = *find_contract_info(request.contract);
  const std::string id = fmt::format("{}/{}", request.track, request.number);
  return {
      {"stage.toml", stage_file(request, defaults)},
      {"lesson.md", lesson(request)},
      {"starter.cu", cuda_starter(contract, defaults, id)},
      {"reference.cu", with_id(cuda_reference_template(request.contract), id)},
      {"starter.py", python_starter(contract, defaults, id)},
      {"reference.py", with_id(python_reference_template(request.contract), id)},
      {"starter.rs", rust_starter(contract, defaults, id)},
      {"reference.rs", with_id(rust_reference_template(request.contract), id)},
  };
}

}  // namespace cudojo

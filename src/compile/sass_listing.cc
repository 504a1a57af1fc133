#include "compile/sass_listing.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "compile/ptx_lines.h"
#include "compile/toolkit_tool.h"

namespace cudojo {

namespace {

// A listing is cut at this many lines (a kernel unrolled without end).
constexpr std::size_t kMostLines = 20000;

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// One space for each run of blanks: nvdisasm pads a predicate's column ("@P0   EXIT").
std::string single_spaced(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\t';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out.push_back(blank ? ' ' : c);
  }
  return out;
}

// The learner's line an annotation names: its own place, else the first place it was inlined at
// that is in the learner's file; 0 when none is.
unsigned learner_line_of(const std::string& annotation, std::string_view file_name) {
  static const std::regex place(R"re("([^"]*)", line ([0-9]+))re");
  for (auto it = std::sregex_iterator(annotation.begin(), annotation.end(), place);
       it != std::sregex_iterator(); ++it) {
    if (!is_learner_path((*it)[1].str(), file_name)) continue;
    const unsigned long line = std::strtoul((*it)[2].str().c_str(), nullptr, 10);
    return line > 0xFFFFFFu ? 0u : static_cast<unsigned>(line);
  }
  return 0;
}

}  // namespace

std::vector<SassFunction> parse_nvdisasm(std::string_view listing, std::string_view learner_file) {
  static const std::regex instruction(R"(^\s*/\*([0-9a-fA-F]+)\*/\s*(.*?)\s*(/\* 0x[0-9a-f]+ \*/)?\s*$)");
  static const std::regex label(R"(^(\.L_[A-Za-z0-9_]+):\s*$)");
  std::vector<SassFunction> functions;
  unsigned current = 0;  // the learner's line of the instructions that follow
  std::size_t lines_kept = 0;
  std::size_t start = 0;
  while (start < listing.size()) {
    const std::size_t end = std::min(listing.find('\n', start), listing.size());
    const std::string_view raw = listing.substr(start, end - start);
    start = end + 1;
    const std::string_view text = trimmed(raw);
    if (text.starts_with(".section") && text.find("\t.text.") == std::string_view::npos &&
        text.find(" .text.") == std::string_view::npos) {
      continue;
    }
    if (text.starts_with(".section")) {
      // `.section .text.NAME,"ax",@progbits`: a function's code begins.
      const auto name_at = text.find(".text.") + 6;
      functions.push_back({std::string(text.substr(name_at, text.find(',', name_at) - name_at)), {}});
      current = 0;
      continue;
    }
    if (functions.empty() || text.empty()) continue;
    if (text.starts_with("//##")) {
      const unsigned line = learner_line_of(std::string(text), learner_file);
      // CUDA's own code, inlined with no learner's place named, stays on the learner's last line.
      if (line != 0) current = line;
      continue;
    }
    if (lines_kept >= kMostLines) continue;
    const std::string line(text);
    std::smatch found;
    if (std::regex_match(line, found, instruction)) {
      const auto offset = static_cast<std::uint32_t>(std::strtoul(found[1].str().c_str(), nullptr, 16));
      functions.back().lines.push_back({offset, single_spaced(found[2].str()), current});
      ++lines_kept;
    } else if (std::regex_match(line, found, label)) {
      functions.back().lines.push_back({std::nullopt, found[1].str() + ":", current});
      ++lines_kept;
    }
  }
  return functions;
}

SassListing disassemble(std::string_view cubin, const std::string& nvdisasm, std::string_view learner_file,
                        const JudgeLimits& limits) {
  SassListing listing;
  if (nvdisasm.empty()) {
    listing.error =
        "SASS needs nvdisasm, the CUDA toolkit's disassembler, which this machine's toolkit lacks (a GPU "
        "machine's toolkit has it; CUDOJO_NVDISASM names one)";
    return listing;
  }
  if (cubin.empty()) {
    listing.error = "ptxas made no cubin to disassemble";
    return listing;
  }
  ToolkitToolRun run;
  run.tool = nvdisasm;
  run.input = std::string(cubin);
  run.input_name = "kernel.cubin";
  // -gi: each instruction's source place, and where inlined code was inlined; -c: code only.
  run.arguments = {"-gi", "-c", "/job/kernel.cubin"};
  run.max_output_bytes = 16u << 20;
  const ToolkitToolResult ran = run_toolkit_tool(run, limits);
  if (!ran.succeeded()) {
    listing.error = ran.error("nvdisasm", "the cubin");
    return listing;
  }
  const SandboxResult& result = ran.ran;
  listing.functions = parse_nvdisasm(result.out, learner_file);
  listing.ok = !listing.functions.empty();
  if (!listing.ok) listing.error = "nvdisasm printed no function";
  return listing;
}

void to_json(nlohmann::json& j, const SassLine& line) {
  j = {{"offset", line.offset ? nlohmann::json(*line.offset) : nlohmann::json()},
       {"text", line.text},
       {"line", line.line ? nlohmann::json(line.line) : nlohmann::json()}};
}

void to_json(nlohmann::json& j, const SassFunction& function) {
  j = {{"entry", function.entry}, {"lines", function.lines}};
}

}  // namespace cudojo

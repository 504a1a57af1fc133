#include "compile/ptx_planting.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

namespace cudojo {

namespace {

struct SharedVariable {
  std::string name;
  std::uint64_t bytes = 0;
  unsigned align = 1;
};

struct Function {
  bool entry = false;
  std::size_t insert_before = 0;  // the line of the body's first instruction (entries only)
  bool found_instruction = false;
  std::vector<SharedVariable> own_shared;
};

// Longer lines are not given to std::regex, whose matching recurses per character (a line of
// hundreds of thousands of blanks, which inline asm can make, would overflow the stack). No
// declaration or function head is that long; such a line may hold neither `.shared` nor a brace.
constexpr std::size_t kLongestParsedLine = 1024;

// The planting fills each variable exactly. A static variable whose size is a multiple of 16 and
// whose alignment is at most 16 leaves no padding between it and the next, wherever ptxas puts it,
// so every byte of the block's static window is some variable's and is filled; otherwise a read
// past the end of an array could land in padding the planting never wrote.
constexpr std::uint64_t kGaplessUnit = 16;

// The prologues are about a dozen lines per variable and kernel: a module of thousands of shared
// variables, or of kernels, would make a planted build of millions of lines to assemble. Past this
// many fills in all the module has the older planting.
constexpr int kMostPlantedRegions = 4096;

// `.entry NAME(`, `.visible .func (.param .b32 func_retval0) NAME(`.
const std::regex kHeader(
    R"(^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*))");
const std::regex kSharedDeclaration(
    R"(^\s*((?:\.(?:visible|weak|common|extern)\s+)*)\.shared\s+(?:\.align\s+(\d+)\s+)?(?:\.v([248])\s+)?\.([a-z]+[0-9x]*)\s+([A-Za-z_$][\w$]*)\s*((?:\[\s*\d*\s*\]\s*)*);\s*$)");
const std::regex kAddressSize(R"(^\s*\.address_size\s+64\b)");
const std::regex kDimension(R"(\[\s*(\d*)\s*\])");

std::optional<unsigned> type_bytes(const std::string& type) {
  static const std::map<std::string, unsigned> sizes = {
      {"b8", 1},   {"u8", 1},  {"s8", 1},  {"b16", 2}, {"u16", 2},  {"s16", 2},   {"f16", 2},
      {"bf16", 2}, {"b32", 4}, {"u32", 4}, {"s32", 4}, {"f32", 4},  {"f16x2", 4}, {"bf16x2", 4},
      {"b64", 8},  {"u64", 8}, {"s64", 8}, {"f64", 8}, {"b128", 16}};
  auto found = sizes.find(type);
  if (found == sizes.end()) return std::nullopt;
  return found->second;
}

// A declaration the rewrite can size; nullopt for one it cannot. `dynamic` says an extern array
// (the launch's dynamic window, filled through the planting's own extern array).
std::optional<SharedVariable> parse_shared(const std::string& text, bool& dynamic) {
  std::smatch match;
  if (!std::regex_match(text, match, kSharedDeclaration)) return std::nullopt;
  dynamic = match[1].str().find(".extern") != std::string::npos;
  const auto element = type_bytes(match[4].str());
  if (!element) return std::nullopt;
  const unsigned vector = match[3].matched ? static_cast<unsigned>(std::stoul(match[3].str())) : 1;
  SharedVariable variable;
  variable.name = match[5].str();
  variable.align = match[2].matched ? static_cast<unsigned>(std::stoul(match[2].str())) : *element * vector;
  std::uint64_t bytes = static_cast<std::uint64_t>(*element) * vector;
  const std::string dimensions = match[6].str();
  for (auto it = std::sregex_iterator(dimensions.begin(), dimensions.end(), kDimension);
       it != std::sregex_iterator(); ++it) {
    const std::string count = (*it)[1].str();
    if (count.empty()) {
      if (!dynamic) return std::nullopt;
      bytes = 0;
      break;
    }
    bytes *= std::stoull(count);
    if (bytes > (1ull << 32)) return std::nullopt;
  }
  variable.bytes = bytes;
  return variable;
}

// The line without its comments; `in_block` carries a `/* ... */` across lines.
std::string without_comments(const std::string& line, bool& in_block) {
  std::string kept;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (in_block) {
      if (line.compare(i, 2, "*/") == 0) {
        in_block = false;
        ++i;
      }
      continue;
    }
    if (line.compare(i, 2, "//") == 0) break;
    if (line.compare(i, 2, "/*") == 0) {
      in_block = true;
      ++i;
      continue;
    }
    kept += line[i];
  }
  return kept;
}

// The line without its string literals (`.pragma "}";`): a brace in one is not a block's.
std::string without_strings(const std::string& text) {
  std::string kept;
  bool in_string = false;
  for (char c : text) {
    if (c == '"') {
      in_string = !in_string;
      continue;
    }
    if (!in_string) kept += c;
  }
  return kept;
}

// Whether the text declares something in the shared state space anywhere in it: `.shared` as a
// directive (at the start, or after a blank, `{` or `;`: inline asm can put a block of its own on
// one line), not as an instruction's state space (`st.shared`, `cvta.shared`).
bool declares_shared(const std::string& text) {
  for (std::size_t at = text.find(".shared"); at != std::string::npos; at = text.find(".shared", at + 1)) {
    const bool starts_directive = at == 0 || std::isspace(static_cast<unsigned char>(text[at - 1])) ||
                                  text[at - 1] == '{' || text[at - 1] == ';';
    const std::size_t after = at + 7;
    const bool whole_word = after >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[after])) ||
                                                      text[after] == '_' || text[after] == '$');
    if (starts_directive && whole_word) return true;
  }
  return false;
}

bool is_declaration(const std::string& text) {
  std::size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return true;  // blank
  // `.loc` too: with line information NVVM puts one among the declarations.
  for (const char* directive : {".reg", ".shared", ".local", ".param", ".loc"}) {
    if (text.compare(first, std::string_view(directive).size(), directive) == 0) return true;
  }
  return false;
}

// Fills [start, end) of the shared window with the pattern: whole words from each thread in turn
// when the start is word-aligned, then bytes (or only bytes). Registers: see the prologue.
void emit_region(std::ostringstream& out, const SharedVariable& region, bool dynamic, int label) {
  out << fmt::format(
      "\t// {}: {}\n", region.name,
      dynamic ? std::string("the launch's dynamic shared memory") : fmt::format("{} bytes", region.bytes));
  out << fmt::format("\tmov.u32 %cjpr6, {};\n", region.name);
  if (dynamic) {
    out << "\tmov.u32 %cjpr7, %dynamic_smem_size;\n\tadd.u32 %cjpr7, %cjpr7, %cjpr6;\n";
  } else {
    out << fmt::format("\tadd.u32 %cjpr7, %cjpr6, {};\n", region.bytes);
  }
  if (region.align >= 4) {
    out << fmt::format(
        "\tand.b32 %cjpr8, %cjpr7, -4;\n"
        "\tshl.b32 %cjpr9, %cjpr4, 2;\n"
        "\tadd.u32 %cjpr9, %cjpr9, %cjpr6;\n"
        "$cudojo_plant_words_{0}:\n"
        "\tsetp.ge.u32 %cjpp, %cjpr9, %cjpr8;\n"
        "\t@%cjpp bra $cudojo_plant_words_end_{0};\n"
        "\tst.shared.u32 [%cjpr9], %cjpr0;\n"
        "\tadd.u32 %cjpr9, %cjpr9, %cjpr5;\n"
        "\tbra $cudojo_plant_words_{0};\n"
        "$cudojo_plant_words_end_{0}:\n"
        "\tmov.u32 %cjpr6, %cjpr8;\n",
        label);
  }
  out << fmt::format(
      "\tadd.u32 %cjpr9, %cjpr6, %cjpr4;\n"
      "$cudojo_plant_bytes_{0}:\n"
      "\tsetp.ge.u32 %cjpp, %cjpr9, %cjpr7;\n"
      "\t@%cjpp bra $cudojo_plant_bytes_end_{0};\n"
      "\tand.b32 %cjpr8, %cjpr9, 3;\n"
      "\tshl.b32 %cjpr8, %cjpr8, 3;\n"
      "\tshr.b32 %cjpr8, %cjpr0, %cjpr8;\n"
      "\tst.shared.u8 [%cjpr9], %cjpr8;\n"
      "\tadd.u32 %cjpr9, %cjpr9, %cjpr3;\n"
      "\tbra $cudojo_plant_bytes_{0};\n"
      "$cudojo_plant_bytes_end_{0}:\n",
      label);
}

std::string prologue(const std::vector<SharedVariable>& regions, int& label) {
  std::ostringstream out;
  out << "\t{ // cudojo planting: this block's shared memory holds the judge's pattern first\n"
         "\t.reg .pred %cjpp;\n"
         "\t.reg .b32 %cjpr<10>;\n";
  out << fmt::format("\tld.global.u32 %cjpr0, [{}];\n", kPlantedPatternSymbol);
  // r3: threads in the block; r4: this thread's index in it; r5: a round of words, in bytes.
  out << "\tmov.u32 %cjpr1, %ntid.x;\n"
         "\tmov.u32 %cjpr2, %ntid.y;\n"
         "\tmul.lo.u32 %cjpr3, %cjpr1, %cjpr2;\n"
         "\tmov.u32 %cjpr4, %ntid.z;\n"
         "\tmul.lo.u32 %cjpr3, %cjpr3, %cjpr4;\n"
         "\tmov.u32 %cjpr4, %tid.z;\n"
         "\tmov.u32 %cjpr5, %tid.y;\n"
         "\tmad.lo.u32 %cjpr4, %cjpr4, %cjpr2, %cjpr5;\n"
         "\tmov.u32 %cjpr5, %tid.x;\n"
         "\tmad.lo.u32 %cjpr4, %cjpr4, %cjpr1, %cjpr5;\n"
         "\tshl.b32 %cjpr5, %cjpr3, 2;\n";
  for (const auto& region : regions) emit_region(out, region, false, label++);
  emit_region(out, SharedVariable{kPlantedDynamicSymbol, 0, 4}, true, label++);
  // Every thread's fill is done before any thread runs the kernel's own code.
  out << "\tbar.sync 0;\n\t}\n";
  return out.str();
}

}  // namespace

std::optional<PlantedBuild> make_planted_build(std::string_view ptx) {
  std::vector<std::string> lines;
  {
    std::istringstream in{std::string(ptx)};
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::vector<SharedVariable> module_shared;
  std::vector<Function> functions;
  std::optional<std::size_t> address_size_line;
  bool in_block_comment = false;
  int depth = 0, parens = 0;
  std::optional<Function> pending;  // a header seen, its body not yet opened
  bool in_declarations = false;
  bool section_pending = false, in_section = false;  // `.section .debug_str { ... }`: debug data
  auto count_braces = [&](const std::string& text) {
    for (char c : text) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
  };
  // A variable the planting can fill exactly, or nothing (the module keeps the older planting).
  auto gapless = [](const std::optional<SharedVariable>& variable, bool dynamic) {
    if (!variable || variable->align > kGaplessUnit) return false;
    return dynamic || variable->bytes % kGaplessUnit == 0;
  };

  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string text = without_strings(without_comments(lines[i], in_block_comment));
    const bool parsed = text.size() <= kLongestParsedLine;
    if (!parsed) {
      if (declares_shared(text) || text.find_first_of("{}") != std::string::npos) return std::nullopt;
      if (depth == 1 && in_declarations) {
        in_declarations = false;
        functions.back().insert_before = i;
        functions.back().found_instruction = true;
      }
      continue;
    }
    std::smatch match;
    if (depth == 0) {
      if (!address_size_line && std::regex_search(text, kAddressSize)) address_size_line = i;
      if (std::regex_search(text, match, kHeader)) {
        pending = Function{match[1].str() == "entry", 0, false, {}};
        parens = 0;
      }
      if (declares_shared(text)) {
        bool dynamic = false;
        auto variable = parse_shared(text, dynamic);
        if (!gapless(variable, dynamic)) return std::nullopt;
        if (!dynamic) module_shared.push_back(*variable);
        continue;
      }
      for (char c : text) parens += c == '(' ? 1 : c == ')' ? -1 : 0;
      const auto brace = text.find('{');
      if (pending && brace != std::string::npos) {
        // The body's opening line must be the brace alone: the prologue goes on the lines after it.
        if (text.find_first_not_of(" \t\r") != brace ||
            text.find_first_not_of(" \t\r", brace + 1) != std::string::npos)
          return std::nullopt;
        functions.push_back(std::move(*pending));
        pending.reset();
        depth = 1;
        in_declarations = true;
        continue;
      }
      if (text.find(".section") != std::string::npos) section_pending = true;
      if (brace != std::string::npos && section_pending) {
        section_pending = false;
        count_braces(text);
        in_section = depth > 0;  // `.section .debug_macinfo { }` opens and closes on one line
        continue;
      }
      if (brace != std::string::npos || text.find('}') != std::string::npos) {
        // An initializer on its line (`.global .align 1 .b8 day[1] = {1};`) is data; any other
        // block outside a function is not something the rewrite reads.
        const auto opens = std::count(text.begin(), text.end(), '{');
        if (pending || opens != std::count(text.begin(), text.end(), '}')) return std::nullopt;
        continue;
      }
      if (pending && parens == 0 && text.find(';') != std::string::npos) pending.reset();  // a prototype
      continue;
    }

    if (in_section) {
      count_braces(text);
      in_section = depth > 0;
      continue;
    }
    Function& function = functions.back();
    if (declares_shared(text)) {
      // Only a whole-line declaration among a kernel's first lines ("demoted variable") is read.
      bool dynamic = false;
      auto variable = parse_shared(text, dynamic);
      if (!gapless(variable, dynamic) || dynamic || !function.entry || depth != 1 || !in_declarations)
        return std::nullopt;
      function.own_shared.push_back(*variable);
    }
    if (in_declarations && depth == 1 && !is_declaration(text)) {
      in_declarations = false;
      function.insert_before = i;
      function.found_instruction = true;
    }
    count_braces(text);
    if (depth < 0) return std::nullopt;
  }
  if (depth != 0 || !address_size_line) return std::nullopt;

  PlantedBuild build;
  std::map<std::size_t, std::string> insertions;
  int label = 0;
  for (const auto& function : functions) {
    if (!function.entry) continue;
    if (!function.found_instruction) return std::nullopt;
    // Every module-scope variable, whether or not this kernel names it: a function reached
    // through a pointer (a table of them in an initializer) names it where no reading of calls
    // would look. A kernel given more shared memory than it may have fails to load, and the
    // module keeps the older planting.
    std::vector<SharedVariable> regions = function.own_shared;
    regions.insert(regions.end(), module_shared.begin(), module_shared.end());
    build.regions += static_cast<int>(regions.size());
    if (build.regions > kMostPlantedRegions) return std::nullopt;
    ++build.kernels;
    insertions[function.insert_before] += prologue(regions, label);
  }
  if (build.kernels == 0) return std::nullopt;

  std::ostringstream out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (auto found = insertions.find(i); found != insertions.end()) out << found->second;
    out << lines[i] << '\n';
    if (i == *address_size_line) {
      out << fmt::format(
          "\n// cudojo planting: the pattern each kernel leaves in its block's shared memory first\n"
          ".visible .global .align 4 .u32 {};\n"
          ".extern .shared .align 4 .b8 {}[];\n",
          kPlantedPatternSymbol, kPlantedDynamicSymbol);
    }
  }
  build.ptx = out.str();
  return build;
}

}  // namespace cudojo

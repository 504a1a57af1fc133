#include "compile/ptx_atomics.h"

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/parse_number.h"

namespace cudojo {

namespace {

const std::regex kLoc(R"(^\s*\.loc\s+(\d+)\s+(\d+))");
// `.entry name(` or `.func (.param ...) name(`; a declaration ends with `;` and has no body.
const std::regex kFunctionHead(R"(\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$]*))");
const std::regex kCall(R"(\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([A-Za-z_$][\w$]*))");
const std::regex kFloatAtomic(
    R"(\b((?:atom|red)(?:\.\w+)*\.add(?:\.\w+)*\.f(?:16x2|16|32|64)|(?:atom|red)(?:\.\w+)*\.add\.noftz(?:\.\w+)*))");

// Instructions and directives are short; a longer line is data (an initialized array is one line
// of megabytes), which no pattern here is about and std::regex need not walk; only its braces
// are counted.
constexpr std::size_t kLongestSearchedLine = 1024;

struct Function {
  std::vector<std::string> callees;
  std::vector<FloatAtomicUse> atomics;
};

std::map<std::string, Function> parse_functions(std::string_view ptx, int source_file_index) {
  std::map<std::string, Function> functions;
  std::istringstream in{std::string(ptx)};
  std::string line, pending, current;
  int depth = 0, learner_line = 0;
  std::smatch match;
  while (std::getline(in, line)) {
    const bool searched = line.size() <= kLongestSearchedLine;
    if (searched && depth == 0 && std::regex_search(line, match, kFunctionHead)) {
      pending = match[2].str();
      learner_line = 0;
    }
    if (searched && !current.empty()) {
      if (std::regex_search(line, match, kLoc)) {
        learner_line =
            saturating_int(match[1].str()) == source_file_index ? saturating_int(match[2].str()) : 0;
      }
      if (std::regex_search(line, match, kCall)) functions[current].callees.push_back(match[1].str());
      if (std::regex_search(line, match, kFloatAtomic)) {
        functions[current].atomics.push_back({match[1].str(), learner_line});
      }
    }
    for (const char c : line) {
      if (c == '{') {
        if (depth == 0 && !pending.empty()) {
          current = pending;
          functions[current];
          pending.clear();
        }
        ++depth;
      } else if (c == '}' && depth > 0) {
        if (--depth == 0) current.clear();
      }
    }
    if (depth == 0 && !pending.empty() && line.find(';') != std::string::npos) pending.clear();
  }
  return functions;
}

}  // namespace

std::vector<FloatAtomicUse> float_atomics_in_kernel(std::string_view ptx, std::string_view entry,
                                                    int source_file_index) {
  const auto functions = parse_functions(ptx, source_file_index);
  std::vector<FloatAtomicUse> found;
  std::vector<std::string> to_visit{std::string(entry)};
  std::set<std::string> visited;
  while (!to_visit.empty()) {
    const std::string name = to_visit.back();
    to_visit.pop_back();
    if (!visited.insert(name).second) continue;
    const auto function = functions.find(name);
    if (function == functions.end()) continue;
    found.insert(found.end(), function->second.atomics.begin(), function->second.atomics.end());
    for (const auto& callee : function->second.callees) to_visit.push_back(callee);
  }
  return found;
}

}  // namespace cudojo

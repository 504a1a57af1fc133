#include "compile/ptx_lines.h"

#include <regex>
#include <sstream>

#include "common/parse_number.h"

namespace cudojo {

namespace {

// `.loc 2 489 9, function_name $L__info_string4, inlined_at 1 12 5`
const std::regex kLoc(R"(^\s*\.loc\s+(\d+)\s+(\d+)(?:\s+(\d+))?(.*)$)");
const std::regex kInlinedAt(R"(inlined_at\s+(\d+)\s+(\d+)\s+(\d+))");
const std::regex kFile(R"(^\s*\.file\s+(\d+)\s+\"([^\"]*)\")");

// Instructions and directives are short; a longer line is data that no pattern here is about.
constexpr std::size_t kLongestSearchedLine = 1024;

}  // namespace

void PtxLineTracker::see(std::string_view text) {
  if (text.size() > kLongestSearchedLine) return;
  const std::string line(text);
  std::smatch match;
  if (std::regex_search(line, match, kLoc)) {
    const int file = saturating_int(match[1].str());
    const int number = saturating_int(match[2].str());
    const int column = match[3].matched ? saturating_int(match[3].str()) : 0;
    unsigned learner_line = 0;
    if (file == learner_file_) {
      learner_line = static_cast<unsigned>(number);
    } else {
      const std::string rest = match[4].str();
      std::smatch inlined;
      if (std::regex_search(rest, inlined, kInlinedAt)) {
        const int outer_file = saturating_int(inlined[1].str());
        const int outer_line = saturating_int(inlined[2].str());
        if (outer_file == learner_file_) {
          learner_line = static_cast<unsigned>(outer_line);
        } else {
          const auto found = resolved_.find({outer_file, outer_line, saturating_int(inlined[3].str())});
          if (found != resolved_.end()) learner_line = found->second;
        }
      }
    }
    // The table lives for one function; bounded so a forged module cannot grow it without end.
    if (resolved_.size() < 65536) resolved_[{file, number, column}] = learner_line;
    current_ = learner_line;
  } else if (line.find(".entry") != std::string::npos || line.find(".func") != std::string::npos) {
    current_ = 0;
    resolved_.clear();
  }
}

bool is_learner_path(std::string_view path, std::string_view file_name) {
  if (file_name.empty()) return false;
  const bool ends_with_name =
      path == file_name || (path.size() > file_name.size() && path.ends_with(file_name) &&
                            path[path.size() - file_name.size() - 1] == '/');
  return ends_with_name && path.find("/include/") == std::string_view::npos;
}

int ptx_learner_file_index(std::string_view ptx, std::string_view file_name) {
  std::istringstream in{std::string(ptx)};
  std::string line;
  std::smatch match;
  int chosen = 0;
  bool chosen_in_include = false;
  while (std::getline(in, line)) {
    if (line.size() > kLongestSearchedLine || line.find(".file") == std::string::npos) continue;
    if (!std::regex_search(line, match, kFile)) continue;
    const std::string path = match[2].str();
    const bool ends_with_name =
        path == file_name || (path.size() > file_name.size() && path.ends_with(file_name) &&
                              path[path.size() - file_name.size() - 1] == '/');
    if (!ends_with_name) continue;
    const bool in_include = path.find("/include/") != std::string::npos;
    if (chosen == 0 || (chosen_in_include && !in_include)) {
      chosen = saturating_int(match[1].str());
      chosen_in_include = in_include;
    }
  }
  return chosen == 0 ? 1 : chosen;
}

std::string only_where_guard_holds(std::string_view guard, bool negated, std::string_view code,
                                   std::string_view label) {
  std::string text = "\t@";
  if (!negated) text += '!';
  text.append(guard).append(" bra ").append(label).append(";\n");
  text.append(code).append(label).append(":\n");
  return text;
}

}  // namespace cudojo

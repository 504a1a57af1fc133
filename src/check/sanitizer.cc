#include "check/sanitizer.h"

#include <fmt/format.h>

#include <regex>
#include <set>
#include <sstream>

namespace cudojo {

namespace {

std::string message_for(const std::string& tool, int line, const std::string& detail) {
  const std::string where = line > 0 ? fmt::format("line {}", line) : "your kernel";
  if (tool == "racecheck") {
    return fmt::format(
        "{}: two threads used the same shared-memory slot with no barrier between them ({}). A "
        "fold step read a slot before the step that writes it had finished, or wrote one another "
        "thread was still reading; put __syncthreads() after the initial store and after every "
        "step. The numbers can still come out right, by luck of timing",
        where, detail);
  }
  if (tool == "synccheck") {
    return fmt::format(
        "{}: __syncthreads() was reached by only part of the block ({}). A barrier inside a branch "
        "that some threads skip, such as if (tid < h), is undefined behaviour even when the sum "
        "comes out right; move the barrier out of the branch so every thread reaches it",
        where, detail);
  }
  return fmt::format(
      "{}: an access outside any allocation ({}); a thread read or wrote past the end of an "
      "array, typically X[i] with i >= N; guard it with i < N",
      where, detail);
}

std::string_view code_for(const std::string& tool) {
  if (tool == "racecheck") return finding_code::kSharedRace;
  if (tool == "synccheck") return finding_code::kDivergentBarrier;
  return finding_code::kOutOfBounds;
}

bool starts_error(const std::string& tool, const std::string& text) {
  if (tool == "racecheck") return text.find("Race reported") != std::string::npos;
  if (tool == "synccheck")
    return text.find("Barrier error") != std::string::npos || text.find("barrier error") != std::string::npos;
  return text.find("Invalid ") != std::string::npos || text.find("Misaligned") != std::string::npos ||
         text.find("out of bounds") != std::string::npos;
}

}  // namespace

SanitizerErrors parse_sanitizer_log(const std::string& tool, const std::string& log,
                                    const std::string& file_name) {
  static const std::regex kFrame(R"(in ([^\s:]+):(\d+))");
  SanitizerErrors result;
  std::set<int> lines_seen;
  std::istringstream in(log);
  std::string raw;
  bool in_error = false;
  bool located = false;
  std::string detail;
  auto close_error = [&] {
    if (in_error && !located && lines_seen.insert(0).second) {
      result.findings.push_back({std::string(code_for(tool)), message_for(tool, 0, detail), std::nullopt});
    }
    in_error = false;
  };
  while (std::getline(in, raw)) {
    std::string text = raw;
    if (text.rfind("=========", 0) == 0) {
      const auto start = text.find_first_not_of("= ");
      text = start == std::string::npos ? std::string() : text.substr(start);
    }
    if (starts_error(tool, text)) {
      close_error();
      in_error = true;
      located = false;
      ++result.errors;
      detail = text.substr(0, 160);
      while (!detail.empty() && (detail.back() == ' ' || detail.back() == '.')) detail.pop_back();
    }
    if (!in_error || located) continue;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kFrame); it != std::sregex_iterator();
         ++it) {
      const std::string frame_file = (*it)[1];
      const bool ours = frame_file == file_name || frame_file.ends_with("/" + file_name);
      if (!ours) continue;
      const int line = std::stoi((*it)[2]);
      located = true;
      if (lines_seen.insert(line).second) {
        result.findings.push_back({std::string(code_for(tool)), message_for(tool, line, detail), line});
      }
      break;
    }
  }
  close_error();
  return result;
}

}  // namespace cudojo

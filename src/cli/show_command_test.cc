// `cudojo show` (and the page's gate_text) write a gate's ratios as the README's stage table does.
#include "cli/show_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace cudojo::cli {
namespace {

TEST(ShowGate, RatiosHaveAtMostTwoDecimalsAndNoSpaceBeforeX) {
  EXPECT_EQ(format_ratio(0.5495), "0.55x");
  EXPECT_EQ(format_ratio(0.549), "0.55x");
  EXPECT_EQ(format_ratio(2.0), "2x");
  EXPECT_EQ(format_ratio(3), "3x");
  EXPECT_EQ(format_ratio(1.25), "1.25x");
  EXPECT_EQ(format_ratio(1.5), "1.5x");
  EXPECT_EQ(format_ratio(0.004), "0.004x");  // not 0x
}

// Every ratio `show` prints for a stage's gate is one the README's row for that stage writes.
TEST(ShowGate, EveryStagesGateReadsAsTheReadmeWritesIt) {
  std::ifstream in(std::filesystem::path(CUDOJO_FIXTURES_DIR) / ".." / ".." / "README.md");
  ASSERT_TRUE(in);
  std::map<std::string, std::string> rows;  // stage id -> its README table row
  std::string previous;
  for (std::string line; std::getline(in, line);) {
    std::smatch id;
    if (!std::regex_search(line, id, std::regex(R"(^\| ([a-z]+/[0-9]+) \|)"))) continue;
    // "| the same |": the gate of the row above.
    rows[id[1]] = line.ends_with("| the same |") ? line + " " + previous : line;
    previous = rows[id[1]];
  }
  const Course course = load_course_report(default_course_root());
  ASSERT_FALSE(course.stages.empty());
  const std::regex ratio(R"(\b[0-9]+(\.[0-9]+)?x\b)");
  for (const Stage& stage : course.stages) {
    const std::string gate = describe_gate(stage);
    EXPECT_FALSE(std::regex_search(gate, std::regex(R"([0-9] x )"))) << stage.id << ": " << gate;
    ASSERT_TRUE(rows.count(stage.id)) << stage.id << " has no row in README's table";
    for (auto it = std::sregex_iterator(gate.begin(), gate.end(), ratio); it != std::sregex_iterator(); ++it)
      EXPECT_NE(rows[stage.id].find(it->str()), std::string::npos)
          << stage.id << ": show says " << it->str() << ", README: " << rows[stage.id];
  }
}

}  // namespace
}  // namespace cudojo::cli

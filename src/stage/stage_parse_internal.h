// Shared by stage_parse.cc (the TOML files, the course) and stage_folder.cc (one stage folder); not
// for use outside src/stage/.
#pragma once

#include <toml++/toml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stage/stage.h"
#include "stage/stage_schema.h"

namespace cudojo {

// The problems found in one file, and the line each key was read from (so a value found wrong
// later, by the stage's rules, is still reported at its line).
class FileReport {
 public:
  FileReport(std::filesystem::path file, std::vector<StageProblem>& problems)
      : file_(std::move(file)), problems_(problems) {}
  void add(int line, std::string key, std::string message);
  // At the key's line when it was read, else its table's line, else the file.
  void add_at(const std::string& key, std::string message);
  const std::filesystem::path& file() const { return file_; }

  std::map<std::string, int> lines;  // "tests.runs" -> 14; "tests" -> the [tests] header's line

 private:
  std::filesystem::path file_;
  std::vector<StageProblem>& problems_;
};

// Every key of `table` (the file's table `table_name`, "" for the top level) against the schema:
// unknown keys and tables (with a "did you mean" hint), wrong types, missing required keys. Goes
// into nested tables the schema lists.
void check_table(const toml::table& table, std::string_view table_name, std::span<const KeySpec> schema,
                 FileReport& report);

// The parsed file, or nullopt after reporting the syntax error at its line.
std::optional<toml::table> parse_toml(const std::filesystem::path& file, FileReport& report);

// One stage folder, read as far as it goes.
struct StageLoad {
  std::optional<Stage> stage;  // set when problems is empty
  std::string id, slug;        // as far as they could be read
  int id_line = 0, slug_line = 0;
  std::vector<StageProblem> problems;
};

StageLoad load_stage_folder(const std::filesystem::path& directory);

}  // namespace cudojo
